"""L4 domain priors: the eight bands of Tab. 10, keyed by the suite's domain names, rendered into
one prompt text; a domain without a prior gets none."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_graphinstruct.methods.priors import PRIORS, Band, prior, render_prior
from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from pytest_graphinstruct.suite.constraints import DOMAINS

#: Tab. 10: (avg degree, clustering, density, degree distribution).
TAB10 = {
    "social": ((4.0, 6.0), (0.40, 0.70), (0.30, 0.50), "power-law"),
    "citation": ((2.5, 4.0), (0.05, 0.25), (0.05, 0.15), "power-law"),
    "biological": ((2.0, 5.0), (0.10, 0.40), (0.10, 0.30), "power-law"),
    "ecological": ((2.0, 4.0), (0.15, 0.35), (0.10, 0.25), "roughly-uniform"),
    "communication": ((3.0, 8.0), (0.20, 0.50), (0.30, 0.50), "power-law"),
    "infrastructure": ((2.0, 4.0), (0.05, 0.20), (0.05, 0.20), "roughly-uniform"),
    "knowledge_graph": ((2.0, 6.0), (0.05, 0.30), (0.05, 0.20), "power-law"),
    "molecular": ((1.5, 3.5), (0.00, 0.15), (0.05, 0.25), "roughly-uniform"),
}


def test_there_is_one_prior_per_real_suite_domain() -> None:
    assert set(PRIORS) == set(TAB10) == DOMAINS - {"general"}


@pytest.mark.parametrize("domain", sorted(TAB10))
def test_the_priors_hold_table_10(domain: str) -> None:
    p = PRIORS[domain]
    deg, clu, den, dist = TAB10[domain]
    assert (p.domain, p.avg_degree, p.clustering, p.density, p.degree_distribution) == (
        domain, Band(*deg), Band(*clu), Band(*den), dist)
    hints = PACKAGED.render_section("domain_priors", f"hints_{domain}").splitlines()
    assert 1 <= len(hints) <= 2 and all(h.startswith("- ") and h[2:].strip() for h in hints)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.label = "x"  # type: ignore[misc]


def test_a_band_is_ordered() -> None:
    with pytest.raises(ValueError, match="exceeds"):
        Band(0.5, 0.4)


@pytest.mark.parametrize("domain", sorted(TAB10))
def test_the_rendered_prior(domain: str) -> None:
    p = PRIORS[domain]
    lines = render_prior(domain, 25).splitlines()
    assert lines[0] == (f"Domain context: {p.label} network (25 nodes). "
                        "Expected structural properties:")
    assert lines[1] == f"- average degree {p.avg_degree.low:.1f}–{p.avg_degree.high:.1f}"
    assert lines[2] == (f"- average clustering coefficient "
                        f"{p.clustering.low:.2f}–{p.clustering.high:.2f}")
    assert lines[3] == f"- density {p.density.low:.2f}–{p.density.high:.2f}"
    assert lines[4] == f"- degree distribution: {p.degree_distribution}"
    assert lines[5:-1] == PACKAGED.render_section("domain_priors",
                                                  f"hints_{domain}").splitlines()
    assert "explicit constraint" in lines[-1]


def test_the_size_is_shown_only_when_known() -> None:
    assert render_prior("social", None).startswith(
        "Domain context: social network. Expected structural properties:")
    assert render_prior("knowledge_graph", 43).startswith(
        "Domain context: knowledge graph network (43 nodes).")


def test_lookup_ignores_case() -> None:
    assert prior("Social") is PRIORS["social"]
    assert render_prior("SOCIAL", 10) == render_prior("social", 10)


@pytest.mark.parametrize("domain", [None, "", "general", "socials", "road", "knowledge graph"])
def test_a_domain_without_a_prior_gets_none(domain: str | None) -> None:
    assert prior(domain) is None
    assert render_prior(domain, 20) == ""


def test_the_wording_comes_from_the_run_s_templates() -> None:
    mine = TemplateSet((("domain_priors", "=== hints_social ===\n- cliques everywhere\n"
                         "=== closing ===\nConstraints win."),))
    lines = render_prior("social", 25, mine).splitlines()
    assert lines[5:] == ["- cliques everywhere", "Constraints win."]
    assert lines[:5] == render_prior("social", 25).splitlines()[:5]
