"""L4 domain priors (paper App. E, Tab. 10): what a network of each domain usually looks like.

CAAP's L4 cells attach :func:`render_prior` to the prompt.  There are exactly eight priors, one
per real domain of the suite (``suite.constraints.DOMAINS`` less ``general``), keyed by the
suite's own domain names.  A domain without a prior — ``general``, ``None``, anything unknown —
gets no prior text at all (an empty string), never the nearest match: a wrong prior would
steer the model away from the explicit constraints it is graded on.

The bands are the paper's.  Several of them disagree with the instructions' own bounds (social
density 0.30–0.50 against an instruction asking for density ≤ 0.45 on 25 nodes, for instance),
so the rendered text says that an explicit constraint wins over an expectation.

The prompt's wording — its frame and each domain's motif hints (section ``hints_<domain>``) —
is ``prompts/templates/domain_priors.txt``, rendered through the run's
:class:`~pytest_graphinstruct.prompts.texts.TemplateSet`; this module holds the numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet

DegreeDistribution = Literal["power-law", "roughly-uniform"]


@dataclass(frozen=True)
class Band:
    """An expected ``[low, high]`` range of one statistic (``low <= high``)."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not self.low <= self.high:
            raise ValueError(f"band low {self.low} exceeds high {self.high}")

    def render(self, decimals: int) -> str:
        """``'4.0–6.0'`` at ``decimals`` places."""
        return f"{self.low:.{decimals}f}–{self.high:.{decimals}f}"


@dataclass(frozen=True)
class DomainPrior:
    """The structural prior of one domain.

    Attributes:
        domain: the suite's domain name (``knowledge_graph``).
        label: how the prompt names it (``knowledge graph``).
        avg_degree / clustering / density: expected bands (clustering is average local
            clustering, density ``nx.density``, as the verifier measures them).
        degree_distribution: qualitative shape of the degree distribution.

    Its one or two motif hints are the section ``hints_<domain>`` of
    ``prompts/templates/domain_priors.txt``.
    """

    domain: str
    label: str
    avg_degree: Band
    clustering: Band
    density: Band
    degree_distribution: DegreeDistribution


def _prior(domain: str, deg: tuple[float, float], clu: tuple[float, float],
           den: tuple[float, float], dist: DegreeDistribution) -> DomainPrior:
    return DomainPrior(domain, domain.replace("_", " "), Band(*deg), Band(*clu), Band(*den),
                       dist)


PRIORS: Final = MappingProxyType({p.domain: p for p in (
    _prior("social", (4.0, 6.0), (0.40, 0.70), (0.30, 0.50), "power-law"),
    _prior("citation", (2.5, 4.0), (0.05, 0.25), (0.05, 0.15), "power-law"),
    _prior("biological", (2.0, 5.0), (0.10, 0.40), (0.10, 0.30), "power-law"),
    _prior("ecological", (2.0, 4.0), (0.15, 0.35), (0.10, 0.25), "roughly-uniform"),
    _prior("communication", (3.0, 8.0), (0.20, 0.50), (0.30, 0.50), "power-law"),
    _prior("infrastructure", (2.0, 4.0), (0.05, 0.20), (0.05, 0.20), "roughly-uniform"),
    _prior("knowledge_graph", (2.0, 6.0), (0.05, 0.30), (0.05, 0.20), "power-law"),
    _prior("molecular", (1.5, 3.5), (0.00, 0.15), (0.05, 0.25), "roughly-uniform"),
)})
"""The eight priors of Tab. 10, by the suite's domain name."""


def prior(domain: str | None) -> DomainPrior | None:
    """The prior of ``domain`` (exact suite name, case-insensitive), or ``None`` if it has
    none."""
    return PRIORS.get(domain.lower()) if domain else None


def render_prior(domain: str | None, num_nodes: int | None,
                 templates: TemplateSet = PACKAGED) -> str:
    """The prompt text of ``domain``'s prior, or ``''`` when the domain has no prior, worded
    by ``templates`` (the run's prompt texts; ``domain_priors.txt``).

    The packaged text starts ``"Domain context: {label} network ({n} nodes). Expected
    structural properties:"`` (the size only when ``num_nodes`` is known), then one bullet each
    for average degree, clustering, density, degree distribution and every hint, then a
    closing line saying that explicit constraints take precedence.
    """
    p = prior(domain)
    if p is None:
        return ""

    def section(name: str, **values: object) -> str:
        return templates.render_section("domain_priors", name, **values)

    header = (section("header", label=p.label) if num_nodes is None
              else section("header_sized", label=p.label, num_nodes=num_nodes))
    return "\n".join([
        header,
        section("average_degree", band=p.avg_degree.render(1)),
        section("clustering", band=p.clustering.render(2)),
        section("density", band=p.density.render(2)),
        section("degree_distribution", shape=p.degree_distribution),
        section(f"hints_{p.domain}"),
        section("closing"),
    ])
