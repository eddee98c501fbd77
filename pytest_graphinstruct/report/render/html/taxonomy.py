"""The failure taxonomy of a cell: what became of each answer.

Each sample of an item falls in exactly one class, checked in this order: ``no answer`` (the
request failed, or the answer is empty), ``refusal`` (no graph; the text says the task is
impossible), ``truncated`` (stopped at the token limit and did not pass), ``unparseable`` (no
graph could be recovered), ``violations`` (a graph that breaks some check; broken down by
verdict category), ``passed``.  An item with an ``error`` outcome and no sample counts once as
``no answer``.  An item the report keeps no samples for (the release's ``quality.json`` files)
cannot be classed: it counts as ``unknown``, never guessed from its scores.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from pytest_graphinstruct.run.records.results import ItemResult, SampleResult

CLASSES: tuple[str, ...] = ("no answer", "refusal", "truncated", "unparseable", "violations",
                            "passed", "unknown")
"""The taxonomy's classes, in the order they are checked and shown."""

_EMPTY = "empty answer"  # the parser's reason for an empty text (graphs.parse.parse_answer)


def sample_class(sample: SampleResult) -> str:
    """The class of one sample (one of :data:`CLASSES` except ``unknown``)."""
    violated = bool(sample.violations or sample.derived_violations)
    empty = sample.error == _EMPTY or (sample.raw_answer is not None
                                       and not sample.raw_answer.strip())
    if not sample.parsed and not sample.refusal and empty:
        return "no answer"
    if sample.refusal:
        return "refusal"
    if sample.truncated and (violated or not sample.parsed):
        return "truncated"
    if not sample.parsed:
        return "unparseable"
    return "violations" if violated else "passed"


def item_classes(item: ItemResult) -> tuple[str, ...]:
    """The class of each of the item's samples; ``("no answer",)`` for an errored item with
    none, ``("unknown",)`` for any other item with none."""
    if item.samples:
        return tuple(sample_class(s) for s in item.samples)
    return ("no answer",) if item.outcome == "error" else ("unknown",)


@dataclass(frozen=True)
class Taxonomy:
    """A cell's counts: samples per class (``classes``, every class present, zeros included)
    and, among the samples with violations, how many violated each verdict category (a sample
    counts once per category it violated)."""

    classes: dict[str, int]
    categories: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.classes.values())


def taxonomy(items: Iterable[ItemResult]) -> Taxonomy:
    """The taxonomy of ``items`` (one cell's, usually)."""
    classes: Counter[str] = Counter()
    categories: Counter[str] = Counter()
    for item in items:
        classes.update(item_classes(item))
        for s in item.samples:
            if sample_class(s) == "violations":
                categories.update({d.category for d in s.violation_details})
    return Taxonomy({c: classes.get(c, 0) for c in CLASSES}, dict(sorted(categories.items())))
