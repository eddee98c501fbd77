"""The prompt texts: every template file loads, fills strictly, and its examples parse."""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx
import pytest

from pytest_graphinstruct.graphs.model import Outcome
from pytest_graphinstruct.graphs.parse import parse_answer, parse_graph
from pytest_graphinstruct.graphs.refusal import find_refusal
from pytest_graphinstruct.prompts import texts
from pytest_graphinstruct.prompts.texts import PACKAGED
from tests.packaging import wheel_ships
from tests.prompts._factory import graph_text

ROOT = Path(__file__).resolve().parents[2]

PLAIN = {
    "anti_laziness": set(),
    "cot_suffix": set(),
    "cot_suffix_edit": set(),
    "few_shot_footer": set(),
    "few_shot_footer_infeasible": set(),
    "few_shot_header": set(),
    "few_shot_item": {"index", "instruction", "answer"},
    "few_shot_item_cot": {"index", "instruction", "reasoning", "answer"},
    "format_attributes": set(),
    "format_code": set(),
    "format_edit": set(),
    "infeasibility": set(),
    "output_only": set(),
    "output_only_edit": set(),
    "output_reasoned": set(),
    "output_reasoned_edit": set(),
    "refusal_answer": set(),
    "system_attributed": {"format", "attributes", "infeasibility", "output_rule",
                          "completeness"},
    "system_default": {"format", "infeasibility", "output_rule", "completeness"},
    "system_edit": {"format", "infeasibility", "output_rule", "completeness"},
    "task_edit": {"base_graph", "instruction"},
}
SECTIONED = {
    "exemplar_reasoning": {
        "tree", "path", "forest", "cycle", "star", "wheel", "complete", "complete_directed",
        "complete_bipartite", "bipartite", "bipartite_sides", "regular", "connected", "dag",
        "generic", "density_cap", "generic_plain", "edit", "edit_full", "steps", "steps_edit",
        "steps_plain", "refusal", "refusal_plain",
    },
    "feedback": {
        "none", "unreadable", "coarse", "fine_header", "fine_closing", "refinement", "bullet",
        "bullet_gap", "bullet_gap_hint", "bullet_where", "more_bullets", "hint_count_high",
        "hint_count_low", "hint_degree_high", "hint_degree_low", "conflict", "locus_cycle",
        "locus_components", "locus_nodes", "locus_edges", "locus_missing_edges",
        "locus_extra_edges", "locus_missing_nodes", "locus_extra_nodes",
        "locus_unreached_nodes", "locus_triangles", "locus_odd_cycle", "of_total",
        "domain_below", "domain_above", "statistic_average_degree", "statistic_clustering",
        "statistic_density", "edit_progress", "edit_progress_all", "edit_progress_none",
        "edit_diff", "edit_no_change", "added_edge", "added_edges", "removed_edge",
        "removed_edges", "added_node", "added_nodes", "removed_node", "removed_nodes",
    },
    "feedback_hints": {f"{key}_{side}" for key in (
        "density", "clustering_coefficient", "average_path_length", "diameter", "modularity",
        "edge_connectivity") for side in ("high", "low")},
    "domain_priors": {"header", "header_sized", "average_degree", "clustering", "density",
                      "degree_distribution", "closing", "hints_social", "hints_citation",
                      "hints_biological", "hints_ecological", "hints_communication",
                      "hints_infrastructure", "hints_knowledge_graph", "hints_molecular"},
    "caap_extras": {"checklist_header", "checklist_footer", "formulas_header", "density",
                    "clustering_coefficient", "average_path_length", "diameter", "modularity"},
    "refusal_reasons": {"degree_too_high", "odd_degree", "too_many_edges", "tree_edges",
                        "too_few_to_connect", "sides_mismatch"},
}

_BLOCK_RE = re.compile(r"^(Graph|GraphEdit)\[.*?^\}", re.M | re.S)


def test_available_lists_exactly_the_known_files() -> None:
    assert set(texts.available()) == set(PLAIN) | set(SECTIONED)


@pytest.mark.parametrize("name", sorted(PLAIN))
def test_plain_template_placeholders(name: str) -> None:
    t = PACKAGED.template(name)
    assert t.is_valid(), name
    assert texts.placeholders(t) == PLAIN[name]
    assert t.template.strip() == t.template, "no leading/trailing whitespace"
    assert t.template, name


@pytest.mark.parametrize("name", sorted(SECTIONED))
def test_sectioned_files(name: str) -> None:
    secs = PACKAGED.sections(name)
    assert set(secs) == SECTIONED[name]
    for key, t in secs.items():
        assert t.is_valid() and t.template.strip(), (name, key)


def test_render_is_strict() -> None:
    with pytest.raises(KeyError):
        PACKAGED.render("task_edit", base_graph="G")
    with pytest.raises(ValueError, match="not used"):
        PACKAGED.render("cot_suffix", extra=1)
    with pytest.raises(KeyError, match="no prompt template"):
        PACKAGED.template("nope")
    with pytest.raises(KeyError, match="no section"):
        PACKAGED.render_section("exemplar_reasoning", "nope")
    assert PACKAGED.render("task_edit", base_graph="$x", instruction="a $b") == (
        "Base graph:\n\n$x\n\nTask: a $b"
    )


def test_parse_sections_rules() -> None:
    secs = texts.parse_sections("\n=== a ===\nx $y\n\n=== b ===\n  z\n")
    assert {k: v.template for k, v in secs.items()} == {"a": "x $y", "b": "  z"}
    with pytest.raises(ValueError, match="before the first section"):
        texts.parse_sections("stray\n=== a ===\nx")
    with pytest.raises(ValueError, match="repeated"):
        texts.parse_sections("=== a ===\nx\n=== a ===\ny", "f.txt")


def test_templates_are_cached() -> None:
    assert PACKAGED.template("format_code") is PACKAGED.template("format_code")
    assert PACKAGED.sections("refusal_reasons") is PACKAGED.sections("refusal_reasons")


def _blocks(text: str) -> list[str]:
    return [m.group(0) for m in _BLOCK_RE.finditer(text)]


def test_format_code_example_parses() -> None:
    (block,) = _blocks(PACKAGED.render("format_code"))
    g = parse_graph(block)
    assert set(g.graph.nodes) == {"0", "1", "2"}
    assert {frozenset(e) for e in g.graph.edges} == {frozenset("01"), frozenset("12")}
    assert not g.directed


def test_attribute_examples_parse_inside_a_graph() -> None:
    lines = [ln.strip() for ln in PACKAGED.render("format_attributes").splitlines()
             if ln.startswith("    ")]
    assert lines == ["0.label = 'Alice';", "edge(0,1).type = 'friend';"]
    block = ("Graph[name='x', nodes=2] {\n    node_list = ['0', '1'];\n"
             "    edge_list = [('0','1')];\n    " + "\n    ".join(lines) + "\n}")
    g = parse_graph(block).graph
    assert g.nodes["0"]["label"] == "Alice"
    assert g.edges["0", "1"]["type"] == "friend"


def test_format_edit_examples_parse() -> None:
    edit, full = _blocks(PACKAGED.render("format_edit"))
    base = parse_graph(graph_text(nx.path_graph(5)))
    result = parse_answer(edit, base=base)
    assert result.outcome is Outcome.GRAPH and result.graph is not None
    assert result.graph.fmt == "edit"
    edges = {frozenset(e) for e in result.graph.graph.edges}
    assert edges == {frozenset(p) for p in (("0", "1"), ("2", "3"), ("3", "4"), ("0", "3"),
                                            ("2", "4"))}
    assert parse_graph(full).num_nodes == 3


def test_only_the_completeness_rule_mentions_an_ellipsis() -> None:
    for name in PLAIN:
        if name != "anti_laziness":
            assert "..." not in PACKAGED.template(name).template, name
    for file in SECTIONED:
        for key, t in PACKAGED.sections(file).items():
            if (file, key) != ("feedback", "more_bullets"):  # the fine bullets left out
                assert "..." not in t.template, (file, key)


def test_refusal_texts_are_detected_as_refusals() -> None:
    generic = PACKAGED.render("refusal_answer")
    assert find_refusal(generic)
    reasons = PACKAGED.sections("refusal_reasons")
    values = {"n": 5, "d": 3, "total": 15, "max": 4, "kind": "tree", "m": 9, "expected": 4,
              "min": 4, "p": 2, "q": 2, "sum": 4}
    for key, t in reasons.items():
        filled = t.substitute({k: values[k] for k in texts.placeholders(t)})
        assert find_refusal(f"{filled} {generic}"), key


def test_package_data_ships_the_templates() -> None:
    shipped = {p.stem for p in (ROOT / "pytest_graphinstruct/prompts/templates").glob("*.txt")
               if wheel_ships(f"prompts/templates/{p.name}")}
    assert shipped == set(texts.available())
