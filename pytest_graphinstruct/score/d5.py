"""D5 efficiency: what the model spent per valid answer (paper Eq. 1).

Per instruction, over everything spent on it — every sample, every refinement round, every
discarded candidate of a method:

* ``TPV = tokens / valid`` — tokens are input + output tokens as the provider's usage block
  reported them, summed over all calls; ``valid`` = samples that parsed and pass the
  instruction's ``graph_type``;
* ``API = calls / valid`` — calls are HTTP attempts, retries included;
* ``D5 = 0.7·exp(−TPV/1000) + 0.3·exp(−(API−1)/2)``, the API term being 1 when ``API < 1``;
* ``D5 = 0`` when nothing is valid.

Only successful responses carry usage: an attempt that failed (a retried 5xx, a timeout) costs a
call but no tokens, because the provider never billed the model for it.

Unknown usage: when any successful response came without a usage block, TPV and D5 are absent
(``None``).  They are never estimated (no tokenizer, no guess from text length).  The one
exception is certain: with no valid sample D5 is 0 whatever was spent.

Infeasible instructions: D5 is the share of samples that are refusals (a refusal scores 1, a
parse failure or a confabulated graph 0).  ``valid`` then counts the refusals — the correct
outputs — and TPV/API per refusal are reported for information only.

Cell level (the cost axis of the Pareto view): ``TPV = Σ tokens / Σ valid`` over every
instruction of the cell (:func:`cell_cost`).  The reference release's leaderboard variant, the
mean of per-instruction TPVs, is :func:`mean_instruction_tpv`; it exists to reproduce the
published tables and is not used for scoring.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from pytest_graphinstruct.answers import Answer

__all__ = [
    "API_SCALE",
    "API_WEIGHT",
    "TOKEN_SCALE",
    "TOKEN_WEIGHT",
    "CellCost",
    "D5Result",
    "Spend",
    "cell_cost",
    "d5_value",
    "infeasible_d5",
    "instruction_d5",
    "mean_instruction_tpv",
]

TOKEN_SCALE = 1000.0
API_SCALE = 2.0
TOKEN_WEIGHT = 0.7
API_WEIGHT = 0.3

Basis = Literal["valid", "no-valid", "unknown-usage", "refusals"]


@dataclass(frozen=True)
class Spend:
    """What one request cost: ``tokens`` (``None`` = not reported) and HTTP ``calls``."""

    tokens: int | None
    calls: int = 1

    def __post_init__(self) -> None:
        if self.tokens is not None and self.tokens < 0:
            raise ValueError(f"negative token count {self.tokens}")
        if self.calls < 0:
            raise ValueError(f"negative call count {self.calls}")

    @classmethod
    def of_answer(cls, answer: Answer) -> Spend:
        """The spend of one answer.

        A successful answer costs its usage total (``None`` when the provider sent no usage or
        an incomplete one); a failed answer (the backend gave up) costs its calls and no tokens
        unless it nevertheless carries a usage block.
        """
        if answer.usage is not None:
            tokens = answer.usage.total
        else:
            tokens = None if answer.ok else 0
        return cls(tokens=tokens, calls=answer.calls)


@dataclass(frozen=True)
class D5Result:
    """D5 of one instruction with its parts.

    ``tokens`` is ``None`` when some usage was unknown.  ``tpv``/``api`` are ``None`` when there
    is nothing to divide by (no valid output) or, for ``tpv``, when tokens are unknown.
    ``token_score``/``api_score`` are the two exponential terms (``None`` when not computed).
    ``d5`` is ``None`` only when usage was unknown and some sample was valid.  ``basis`` says
    which rule produced ``d5``: ``valid`` (Eq. 1), ``no-valid`` (0), ``unknown-usage``
    (absent) or ``refusals`` (infeasible instruction: refusal share).
    """

    tokens: int | None
    calls: int
    valid: int
    tpv: float | None
    api: float | None
    token_score: float | None
    api_score: float | None
    d5: float | None
    basis: Basis


def d5_value(tpv: float, api: float) -> float:
    """Eq. 1: ``0.7·exp(−TPV/1000) + 0.3·exp(−(API−1)/2)``, API term 1 when ``API < 1``.

    Promises a value in ``[0, 1]`` for any ``tpv ≥ 0`` and ``api ≥ 0`` (``inf`` gives 0 terms).
    """
    if tpv < 0 or api < 0 or math.isnan(tpv) or math.isnan(api):
        raise ValueError(f"TPV and API must be non-negative numbers, got {tpv!r}, {api!r}")
    return TOKEN_WEIGHT * _token_score(tpv) + API_WEIGHT * _api_score(api)


def _token_score(tpv: float) -> float:
    return math.exp(-tpv / TOKEN_SCALE)


def _api_score(api: float) -> float:
    return 1.0 if api < 1 else math.exp(-(api - 1) / API_SCALE)


def _totals(spends: Iterable[Spend]) -> tuple[int | None, int]:
    tokens: int | None = 0
    calls = 0
    for s in spends:
        calls += s.calls
        if tokens is not None:
            tokens = None if s.tokens is None else tokens + s.tokens
    return tokens, calls


def instruction_d5(spends: Iterable[Spend], valid: int) -> D5Result:
    """D5 of a feasible instruction from everything spent on it and its number of valid samples.

    ``spends`` must list every request made for the instruction (all samples, all refinement
    rounds, discarded candidates included).  See the module docstring for the rules.
    """
    if valid < 0:
        raise ValueError(f"negative valid count {valid}")
    tokens, calls = _totals(spends)
    if valid == 0:
        return D5Result(tokens, calls, 0, None, None, None, None, 0.0, "no-valid")
    api = calls / valid
    api_score = _api_score(api)
    if tokens is None:
        return D5Result(None, calls, valid, None, api, None, api_score, None, "unknown-usage")
    tpv = tokens / valid
    token_score = _token_score(tpv)
    d5 = TOKEN_WEIGHT * token_score + API_WEIGHT * api_score
    return D5Result(tokens, calls, valid, tpv, api, token_score, api_score, d5, "valid")


def infeasible_d5(spends: Iterable[Spend], refusals: int, samples: int) -> D5Result:
    """D5 of an infeasible instruction: ``refusals / samples`` (0 when there are no samples).

    Defined even when usage is unknown (it does not depend on tokens).  ``valid`` is the number
    of refusals; ``tpv``/``api`` are per refusal, for the cell's cost only.
    """
    if samples < 0 or not 0 <= refusals <= samples:
        raise ValueError(f"need 0 <= refusals <= samples, got {refusals}, {samples}")
    tokens, calls = _totals(spends)
    share = refusals / samples if samples else 0.0
    tpv = tokens / refusals if refusals and tokens is not None else None
    api = calls / refusals if refusals else None
    return D5Result(tokens, calls, refusals, tpv, api, None, None, share, "refusals")


@dataclass(frozen=True)
class CellCost:
    """The cost of a cell (one model × strategy × method run over a suite).

    ``tpv = tokens / valid`` over all instructions; ``None`` when some instruction's usage is
    unknown (``unknown_instructions > 0``) or when nothing in the cell is valid.
    """

    tokens: int | None
    calls: int
    valid: int
    instructions: int
    unknown_instructions: int
    tpv: float | None
    api: float | None


class ItemSpend(NamedTuple):
    """What one instruction spent, as :func:`cell_cost` adds it up."""

    tokens: int | None  #: ``None``: not known
    calls: int
    valid: int


def cell_cost(results: Iterable[ItemSpend | D5Result]) -> CellCost:
    """Aggregate per-instruction spending into the cell's TPV (total tokens / total valid)."""
    tokens = 0
    calls = 0
    valid = 0
    n = 0
    unknown = 0
    for r in results:
        n += 1
        calls += r.calls
        valid += r.valid
        if r.tokens is None:
            unknown += 1
        else:
            tokens += r.tokens
    known_tokens = None if unknown else tokens
    tpv = known_tokens / valid if known_tokens is not None and valid else None
    api = calls / valid if valid else None
    return CellCost(known_tokens, calls, valid, n, unknown, tpv, api)


def mean_instruction_tpv(tpvs: Iterable[float | None]) -> float | None:
    """The reference release's leaderboard TPV: mean of per-instruction TPVs that are finite and
    positive (``None`` when there is none).  Used to reproduce published tables only."""
    xs = [t for t in tpvs if t is not None and math.isfinite(t) and t > 0]
    return math.fsum(xs) / len(xs) if xs else None
