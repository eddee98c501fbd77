"""Templates: how one kind of instruction is worded, constrained and answered.

A :class:`Template` turns a node count and a seeded random stream into a :class:`Draft` — the
English text (one of several phrasings), the explicit constraints it states, and a generator of
candidate references.  :func:`build_level` lays templates out over a level with a stratified
plan (:func:`stratify`), draws each instruction from its own seeded stream, and attaches
verified references (:func:`~pytest_graphinstruct.build.common.find_references`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import networkx as nx

from pytest_graphinstruct.build.common import (
    BuildError,
    TooFewDistinct,
    find_references,
    make_record,
)
from pytest_graphinstruct.build.streams import rng_for
from pytest_graphinstruct.suite.constraints import parse_constraint
from pytest_graphinstruct.verify.implicit import infer_implicit
from pytest_graphinstruct.vocab import SIZE_BUCKETS

#: Default node-count range per size bucket (inclusive).
SIZE_RANGES: dict[str, tuple[int, int]] = {"small": (5, 20), "medium": (21, 50),
                                           "large": (51, 80)}
BUCKETS: tuple[str, ...] = SIZE_BUCKETS
#: Draws of a template's parameters before the build gives up on one instruction.
DRAFT_TRIES = 60


@dataclass
class Draft:
    """One instruction as a template drew it (before references).

    ``generate`` draws candidate references (``None`` rejects a draw); ``unique`` says the
    instruction admits one answer up to isomorphism; ``feasible=False`` drafts carry
    ``extra["infeasibility"]`` instead of references.
    """

    text: str
    explicit: list[str]
    generate: Callable[[random.Random], nx.Graph | None] | None
    unique: bool = False
    feasible: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Template:
    """A named instruction kind: ``make(rng, n)`` drafts an instruction on ``n`` nodes (or
    returns ``None`` when this ``n``/draw does not suit it), for the size buckets it allows."""

    name: str
    make: Callable[[random.Random, int], Draft | None]
    buckets: tuple[str, ...] = BUCKETS
    sizes: Mapping[str, tuple[int, int]] = field(default_factory=lambda: SIZE_RANGES)
    phrasings: int = 0  # how many phrasings ``make`` chooses from (for docs)


def phrase(rng: random.Random, phrasings: Sequence[str], **values: object) -> str:
    """One of ``phrasings`` (chosen by ``rng``) with ``values`` filled in."""
    return rng.choice(phrasings).format(**values)


def round_outward(x: float, places: int, up: bool) -> Decimal:
    """``x`` rounded to ``places`` decimals towards +∞ (``up``, for an upper bound) or −∞ (a
    lower bound).  A value within 1e-9 of a grid point counts as on it, so float noise
    (``0.39999999999999997`` for a clustering of 2/5) does not push a bound one step out."""
    scale = 10 ** places
    k = math.ceil(x * scale - 1e-9) if up else math.floor(x * scale + 1e-9)
    return Decimal(k).scaleb(-places)


def number_text(d: Decimal | int) -> str:
    """A number as constraints and texts write it: no exponent, no trailing zeros
    (``0.45``, ``2.1036``, ``3``)."""
    if isinstance(d, int):
        return str(d)
    return format(d.normalize(), "f")


def stratify(count: int, templates: Sequence[Template]) -> list[tuple[Template, str]]:
    """A deterministic plan of ``count`` (template, bucket) slots: templates round-robin, and
    each template cycles through the buckets it allows, so every template meets every allowed
    bucket and bucket totals stay within a few of each other."""
    plan = []
    t_count = len(templates)
    for i in range(count):
        t = templates[i % t_count]
        plan.append((t, t.buckets[(i // t_count) % len(t.buckets)]))
    return plan


def implicit_of(explicit: Sequence[str]) -> list[str]:
    """The canonical forms of what the verifier infers from ``explicit``."""
    return [c.canonical for c in infer_implicit([parse_constraint(s) for s in explicit])]


def build_level(level: int, templates: Sequence[Template], seed: int, count: int, *,
                plan: Sequence[tuple[Template, str]] | None = None,
                indices: Collection[int] | None = None) -> list[dict[str, Any]]:
    """``count`` records of ``level`` with ids ``L<level>-001`` …, laid out by ``plan``
    (default :func:`stratify`), each drawn from ``rng_for(seed, "L<level>", index)``.

    ``indices`` (1-based) builds only those records — each equal to its counterpart in the
    full build, since a record depends only on ``(seed, level, count, index)``.

    Raises:
        BuildError: a template could not draft an instruction or find its references.
    """
    out = []
    for i, (t, bucket) in enumerate(plan if plan is not None else stratify(count, templates)):
        if indices is not None and i + 1 not in indices:
            continue
        iid = f"L{level}-{i + 1:03d}"
        rng = rng_for(seed, f"L{level}", i + 1)
        lo, hi = t.sizes[bucket]
        refs_rng = rng_for(seed, f"L{level}", i + 1, "refs")
        for _ in range(DRAFT_TRIES):
            n = rng.randint(lo, hi)
            draft = t.make(rng, n)
            if draft is None:
                continue
            rec = make_record(iid, level, draft.text, draft.explicit,
                              implicit_of(draft.explicit), size=bucket, feasible=draft.feasible,
                              template=t.name, extra=draft.extra)
            if not draft.feasible:
                break
            assert draft.generate is not None
            try:
                find_references(rec, draft.generate, refs_rng, unique=draft.unique)
            except TooFewDistinct:
                continue  # this draft admits one answer only: draw the instruction again
            break
        else:
            raise BuildError(f"{iid}: template {t.name} drafted nothing usable for {bucket}")
        out.append(rec)
    return out
