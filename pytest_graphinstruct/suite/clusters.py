"""The cluster of an instruction: which instructions were made from the same pattern.

Instructions made from one template share more than their level: a model that handles the
pattern well (or badly) on one run tends to do so on all of them, and run-to-run noise (sampling
temperature, a provider's drift) moves them together.  The regression gate's paired bootstrap
therefore resamples clusters, not single instructions (docs/SCORING.md, "Confidence
intervals").

* A suite that names its templates (``template`` in the record, as this project's suites do):
  the cluster is the template.
* A suite without templates (the official GraphInstruct release): a signature of the pattern,
  ``L{level}|{constraints}|{extras}``, where ``constraints`` are the explicit constraints'
  keys and operators, sorted, with the value kept only for named and true/false values
  (``graph_type=tree``, ``directed=false``, ``num_nodes=``, ``density<=``: the numbers vary
  within a pattern, the kind of graph does not), and ``extras`` name the L4 domain and an
  infeasible instruction.  Instructions of one signature ask for the same thing with other
  numbers (and other wording).
"""

from __future__ import annotations

from pytest_graphinstruct.suite.constraints import Constraint, ValueKind
from pytest_graphinstruct.suite.instruction import Instruction

__all__ = ["cluster_of", "signature"]

_KEPT = (ValueKind.BOOL, ValueKind.NAME)


def _part(c: Constraint) -> str:
    if c.spec.kind in _KEPT:
        value = c.value if isinstance(c.value, str) else str(c.value).lower()
        return f"{c.key}{c.op.value}{value}"
    return f"{c.key}{c.op.value}"


def signature(instruction: Instruction) -> str:
    """The derived pattern signature of an instruction (see the module docstring)."""
    parts = sorted({_part(c) for c in instruction.explicit})
    extras = []
    if instruction.domain is not None:
        extras.append(f"domain={instruction.domain}")
    if not instruction.feasible:
        extras.append("infeasible")
    return "|".join([f"L{instruction.level}", ",".join(parts), *extras])


def cluster_of(instruction: Instruction) -> str:
    """The instruction's cluster: its ``template`` when the suite names one, else its
    :func:`signature`."""
    return instruction.template if instruction.template else signature(instruction)
