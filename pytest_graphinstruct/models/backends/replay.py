"""The replay model: answers from a recorded raw-generation JSONL file.

``(instruction_id, sample_index)`` → the recorded ``raw_output`` with its recorded token counts
(``usage`` is ``None`` when neither count was recorded) and ``api_calls``.  A missing
instruction or sample index is ``Answer(error="no recorded answer for ...")`` — an
infrastructure error, never a model failure; when the file held the instruction only on lines
the reader skipped, the error names them (``line 4 skipped: impossible usage``).  Not cacheable
(the file already is the cache).
"""

from __future__ import annotations

from pytest_graphinstruct.answers import USAGE_RECORDED, Answer, Usage
from pytest_graphinstruct.models.backends.recorded import PROBLEM_KINDS, Responses
from pytest_graphinstruct.models.base import Request


class ReplayBackend:
    """Answers from :class:`~.recorded.Responses`.  Thread-safe."""

    cacheable = False
    inline = True  # answers from memory (the scheduler asks in the submitting thread)

    def __init__(self, responses: Responses) -> None:
        self.responses = responses
        self.endpoint = f"replay:{responses.path}"

    def __repr__(self) -> str:
        return f"ReplayBackend({self.responses.path!r}, {len(self.responses)} instructions)"

    def complete(self, request: Request) -> Answer:
        """The recorded answer of sample ``request.sample_index`` of the instruction."""
        record = self.responses.get(request.instruction_id)
        k = request.sample_index
        if record is None:
            skipped = self.responses.skipped_for(request.instruction_id)
            why = ("; ".join(f"line {p.line} skipped: {PROBLEM_KINDS[p.kind][0]}"
                             for p in skipped[:3]) if skipped
                   else f"not in {self.responses.path or 'the responses'}")
            return Answer(error=f"no recorded answer for {request.instruction_id} ({why})",
                          calls=0)
        if not 0 <= k < len(record.samples):
            return Answer(error=f"no recorded answer for {request.instruction_id} sample {k} "
                                f"(only {len(record.samples)} recorded)", calls=0)
        s = record.samples[k]
        usage = (None if s.input_tokens is None and s.output_tokens is None
                 else Usage(s.input_tokens, s.output_tokens, USAGE_RECORDED))
        return Answer(text=s.raw_output, usage=usage, calls=s.api_calls, finish_reason=None)
