"""Comparing an output with its pinned copy: everything exact except the floats.

The pinned outputs (the references' report, ``tests/run/score_digest.json``; every output of a
run, ``tests/plugin/pinned/``) must hold on any machine, and the last digits of D3 — the GCN
embedding score, trained with BLAS/MKL kernels that the CPU (or a GPU) chooses — do not.  So a
pin holds every verdict, outcome, string and integer exactly, and every float within a
tolerance (issue 32).  Measured spread of the references' report (``docs/SCORING.md``,
"Pinned scores"): one item's D3 moves by at most 9.1e-9 between the AVX-512, AVX2 and generic
kernels of one AMD EPYC and 2.6e-9 between two CPUs, and by up to 1.2e-6 between a CPU
and an H200 GPU; its GCN part (``details.d3.gcn``) by 6.7× as much; every other float by less.

The tolerances (absolute, :func:`tolerance`):

* :data:`SCORE_TOLERANCE`, 1e-5, for every float unless named below: a per-item score (D1–D5,
  level scores) may move by 1e-5 — eight times the CPU/GPU spread, a thousand times the CPU
  one, and the once-allowed move of a faster GCN.  Every aggregate of the report is a
  weighted mean of item scores, a percentile of bootstrap means of them (the intervals) or a
  pass rate, so it moves by no more than the items do and gets the same bound;
* :data:`FIELD_TOLERANCES`: the floats that amplify an item's move.  ``gcn`` (D3's GCN part)
  enters D3 with weight 0.15 (``score.d3.WEIGHTS``), so D3's 1e-5 is 6.7e-5 of it;
  ``q_per_ktpv`` is S_final·1000/TPV, 1e-4 while TPV ≥ 115 tokens per valid output;
  ``s_final`` (S_total·1.15 with a Pareto bonus) and ``frontier_distance`` (a difference of
  two qualities) move by up to twice a score's bound.

Text (Markdown, HTML, JUnit XML, the terminal) is a rendering of those floats: it must be
identical except that a printed number with a decimal point or exponent may differ by one unit
of its last printed digit plus a slack (:func:`text_differences`): a score that moves by less
than the printed unit can flip the last digit (0.9499 vs 0.9498) and never more.  An integer
(a count, an id, a level) is compared exactly.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal, InvalidOperation

SCORE_TOLERANCE = 1e-5
"""How far any float may move unless :data:`FIELD_TOLERANCES` names its field."""

FIELD_TOLERANCES: dict[str, float] = {
    "gcn": 1e-4,  # D3's GCN part: weight 0.15 in D3, so 1e-5 / 0.15 = 6.7e-5 of it
    "q_per_ktpv": 1e-4,  # S_final / (TPV / 1000): 1e-4 while TPV >= 115
    "s_final": 2e-5,  # S_total * (1 + 0.15 * bonus)
    "frontier_distance": 2e-5,  # a difference of two qualities
}
"""Fields (by their last key) whose floats amplify a score's move, and their tolerance."""

SHOWN = 10
"""How many differences a message lists before "… and N more"."""

# a number standing alone: not part of a word or identifier (L3, p1e5a, level_2 are text)
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")


def tolerance(path: str) -> float:
    """The absolute tolerance of the float at ``path`` (``a.b[0].c``): its last key's entry
    in :data:`FIELD_TOLERANCES`, else :data:`SCORE_TOLERANCE`."""
    last = re.sub(r"\[[^\]]*\]$", "", path).rsplit(".", 1)[-1]
    return FIELD_TOLERANCES.get(last, SCORE_TOLERANCE)


def floats_agree(expected: float, observed: float, tol: float) -> bool:
    """Whether ``observed`` is within ``tol`` of ``expected``; NaN agrees only with NaN and an
    infinity only with itself (``tol = 0``: the same float)."""
    if math.isnan(expected) or math.isnan(observed):
        return math.isnan(expected) and math.isnan(observed)
    if math.isinf(expected) or math.isinf(observed):
        return expected == observed
    return abs(expected - observed) <= tol


def summarize(lines: Sequence[str], limit: int = SHOWN) -> str:
    """``lines`` one per line, at most ``limit`` of them, then "… and N more"."""
    shown = list(lines[:limit])
    if len(lines) > limit:
        shown.append(f"… and {len(lines) - limit} more")
    return "\n".join(shown)


def _show(value: object, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _index_label(items: Sequence[object], i: int) -> str:
    """A list element's label: its ``instruction_id`` when it has one (report items), else
    its index."""
    item = items[i]
    if isinstance(item, dict) and isinstance(item.get("instruction_id"), str):
        return f"[{item['instruction_id']}]"
    return f"[{i}]"


def json_differences(expected: object, observed: object, path: str = "", *,
                     tol: Callable[[str], float] = tolerance) -> Iterator[str]:
    """Where ``observed`` (parsed JSON) differs from ``expected``, one line each naming the
    path, the expected and the observed value: floats beyond ``tol(path)``, any other value,
    type, key, key order or length at all."""
    where = path or "(top)"
    if isinstance(expected, float) and isinstance(observed, float):
        if not floats_agree(expected, observed, tol(path)):
            yield (f"{where}: expected {expected!r}, observed {observed!r} "
                   f"(|Δ| {abs(expected - observed):.2g} > {tol(path):g})")
    elif isinstance(expected, dict) and isinstance(observed, dict):
        for key in expected:
            if key not in observed:
                yield f"{_child(path, key)}: missing (expected {_show(expected[key])})"
        for key in observed:
            if key not in expected:
                yield f"{_child(path, key)}: not expected (observed {_show(observed[key])})"
        common = [k for k in expected if k in observed]
        if common != [k for k in observed if k in expected]:
            yield f"{where}: the keys are in another order"
        for key in common:
            yield from json_differences(expected[key], observed[key], _child(path, key), tol=tol)
    elif isinstance(expected, list) and isinstance(observed, list):
        if len(expected) != len(observed):
            yield f"{where}: expected {len(expected)} elements, observed {len(observed)}"
        for i in range(min(len(expected), len(observed))):
            yield from json_differences(expected[i], observed[i],
                                        path + _index_label(expected, i), tol=tol)
    elif type(expected) is not type(observed) or expected != observed:
        yield f"{where}: expected {_show(expected)}, observed {_show(observed)}"


def split_floats(value: object, path: str = "") -> tuple[object, list[tuple[str, float]]]:
    """``value`` (parsed JSON) with every float replaced by a placeholder, and its floats in
    order with their paths.  Strings are tagged so that no string can pass for the placeholder;
    :func:`shape_digest` hashes the first part."""
    floats: list[tuple[str, float]] = []

    def walk(v: object, p: str) -> object:
        if isinstance(v, float):
            floats.append((p, v))
            return "f"
        if isinstance(v, str):
            return "s:" + v
        if isinstance(v, dict):
            return {k: walk(x, _child(p, k)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, f"{p}[{i}]") for i, x in enumerate(v)]
        return v  # int, bool, None

    return walk(value, path), floats


def shape_digest(value: object) -> str:
    """sha256 (16 hex digits) of everything in ``value`` but its floats' values: every key,
    string, integer, boolean and null, and where the floats are."""
    shape, _ = split_floats(value)
    blob = json.dumps(shape, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _exponent(token: str) -> int | None:
    """The power of ten of ``token``'s last printed digit; ``None`` for an integer literal."""
    if "." not in token and "e" not in token.lower():
        return None
    try:
        exp = Decimal(token).as_tuple().exponent
    except InvalidOperation:  # pragma: no cover - the pattern only matches numbers
        return None
    return exp if isinstance(exp, int) else None


def numbers_agree(expected: str, observed: str, slack: float) -> bool:
    """Whether two printed numbers agree: integer literals only when identical; otherwise
    when they differ by at most one unit of the finer last printed digit plus ``slack``."""
    if expected == observed:
        return True
    exps = [_exponent(expected), _exponent(observed)]
    if exps[0] is None and exps[1] is None:
        return False
    unit = Decimal(10) ** min(e for e in exps if e is not None)
    return abs(Decimal(expected) - Decimal(observed)) <= unit + Decimal(repr(slack))


def _around(line: str, start: int, width: int = 80) -> str:
    """``line`` cut to ``width`` characters around position ``start``, as a literal."""
    lo = max(0, min(start - width // 2, len(line) - width))
    return repr(line[lo:lo + width])


def _line_difference(expected: str, observed: str, slack: float) -> str | None:
    """Why ``observed`` is not ``expected`` by the number rule (a short description around the
    first difference), or ``None`` when it is."""
    if _NUMBER.split(expected) == _NUMBER.split(observed):
        for e, o in zip(_NUMBER.finditer(expected), _NUMBER.finditer(observed), strict=True):
            a, b = e.group(), o.group()
            if not numbers_agree(a, b, slack):
                why = ("an integer" if _exponent(a) is None and _exponent(b) is None
                       else "more than one unit of the last digit")
                return f"{a} → {b} ({why}) in {_around(expected, e.start())}"
        return None
    start = next((i for i, (a, b) in enumerate(zip(expected, observed, strict=False))
                  if a != b), min(len(expected), len(observed)))
    return f"expected {_around(expected, start)}, observed {_around(observed, start)}"


def text_differences(expected: str, observed: str, *, slack: float = SCORE_TOLERANCE,
                     name: str = "", first_line: int = 1) -> list[str]:
    """Where ``observed`` differs from ``expected`` beyond the number rule (:func:`numbers_agree`
    with ``slack``), one line each naming the line number of ``expected`` (its first line is
    ``first_line``)."""
    e_lines, o_lines = expected.splitlines(), observed.splitlines()
    shapes = [[_NUMBER.sub("#", line) for line in lines] for lines in (e_lines, o_lines)]
    prefix = f"{name} " if name else ""
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, shapes[0], shapes[1], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                why = _line_difference(e_lines[i], o_lines[j], slack)
                if why is not None:
                    out.append(f"{prefix}line {first_line + i}: {why}")
            continue
        for i, j in zip(range(i1, i2), range(j1, j2), strict=False):
            out.append(f"{prefix}line {first_line + i}: "
                       f"{_line_difference(e_lines[i], o_lines[j], slack)}")
        for i in range(i1 + (j2 - j1), i2):
            out.append(f"{prefix}line {first_line + i}: missing ({e_lines[i][:80]!r})")
        for j in range(j1 + (i2 - i1), j2):
            out.append(f"{prefix}after line {first_line + i2 - 1}: not expected "
                       f"({o_lines[j][:80]!r})")
    return out
