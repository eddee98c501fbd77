"""What a method string holds, as a typed record: :class:`MethodSpec`.

A cell's method is written as a string (``--gi-method=vgig-fine@T2``, the cell label's last
part); :func:`pytest_graphinstruct.methods.registry.parse_method` is the one place that reads
it, into this record.  The record holds only what the string says; what the run supplies (the
chains, the default rounds and feedback) comes with :class:`MethodContext`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.vocab import FeedbackLevel

ROUNDS_MARK = "@T"
"""An iterative method may carry its rounds ``T``: ``vgig-fine@T2`` (the E5 sweep's cells)."""


@dataclass(frozen=True)
class MethodSpec:
    """One parsed method string.

    Attributes:
        text: the method as written (``vgig-fine@T2``; ``baseline`` for ``none``), which is
            what cell labels and reports carry.
        base: the registry name of the method (``vgig``, ``retry``, ``sc``, ``caap``,
            ``combined``, ``baseline``, ``constrained``).
        feedback: the feedback granularity the string fixes (``vgig-coarse``), else ``None``.
        rounds: the rounds ``T`` the string names (``@T2``), else ``None``.
    """

    text: str
    base: str
    feedback: FeedbackLevel | None = None
    rounds: int | None = None


@dataclass(frozen=True)
class MethodContext:
    """What a run lends a method besides its spec (``RunConfig``'s method options).

    Attributes:
        chains: samples (chains) of a method's cell (``gi_chains``).
        rounds: the rounds ``T`` of a spec that names none (``--gi-vgig-rounds``).
        feedback: the feedback granularity of a spec that fixes none (``--gi-feedback``).
        temperature: the run's decoding temperature (``None``: the run sets none).
        model_tiers: the user's ``(model, tier)`` pairs for CAAP (``gi_model_tiers``).
        templates: the run's prompt texts (``--gi-prompts`` over the packaged ones), which
            word the feedback and refinement turns.
    """

    chains: int
    rounds: int
    feedback: FeedbackLevel
    temperature: float | None = None
    model_tiers: tuple[tuple[str, str], ...] = ()
    templates: TemplateSet = PACKAGED

    def rounds_of(self, spec: MethodSpec) -> int:
        """The rounds ``T`` of ``spec``: those it names, else :attr:`rounds`."""
        return self.rounds if spec.rounds is None else spec.rounds

    def feedback_of(self, spec: MethodSpec) -> FeedbackLevel:
        """The feedback granularity of ``spec``: the one it fixes, else :attr:`feedback`."""
        return spec.feedback or self.feedback
