"""CAAP: the packaged table holds the paper's cells, every cell decides as Tab. 9 says, tiers and
their aliases, user overrides, the extras' content, and malformed tables fail in one line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.methods import caap
from pytest_graphinstruct.methods.caap import (
    EXTRAS,
    ROWS,
    TIERS,
    CaapTableError,
    Cell,
    default_table,
    load_table,
    model_tier,
    parse_table,
    row_of,
    select,
)
from pytest_graphinstruct.methods.priors import render_prior
from pytest_graphinstruct.suite.constraints import DOMAINS
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, instruction_from_record, load_suite
from pytest_graphinstruct.vocab import STRATEGIES
from tests.packaging import wheel_ships

SUITE_ROOT = Path(__file__).resolve().parents[2] / "instructions"
DATA = Path(caap.__file__).parent / "data" / "caap.toml"

ZS, FS, ZC, FC = "zero-shot", "few-shot", "zero-cot", "few-cot"

#: Tab. 9 (and the release's §4.4 table), written out cell by cell.
PAPER: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    **{("L0", t): (ZS, ()) for t in TIERS},
    **{("L1-simple", t): (ZS, ()) for t in TIERS},
    ("L1-complex", "T3"): (ZC, ()),
    ("L1-complex", "T2-GPT"): (FS, ()),
    ("L1-complex", "T2-open"): (FC, ()),
    ("L1-complex", "T1"): (FC, ()),
    ("L2", "T3"): (ZC, ("checklist",)),
    ("L2", "T2-GPT"): (FS, ()),
    ("L2", "T2-open"): (FC, ()),
    ("L2", "T1"): (FC, ()),
    ("L3", "T3"): (ZC, ("formula",)),
    ("L3", "T2-GPT"): (ZS, ()),
    ("L3", "T2-open"): (ZC, ()),
    ("L3", "T1"): (ZC, ()),
    ("L4", "T3"): (FS, ("domain",)),
    ("L4", "T2-GPT"): (FS, ("domain",)),
    ("L4", "T2-open"): (FC, ("domain",)),
    ("L4", "T1"): (FC, ("domain",)),
    ("L5", "T3"): (ZC, ()),
    ("L5", "T2-GPT"): (FC, ()),
    ("L5", "T2-open"): (FC, ()),
    ("L5", "T1"): (FC, ()),
}

#: One model the release places in each tier.
MODEL_OF = {"T1": "claude-sonnet-4-6", "T2-GPT": "gpt-4o", "T2-open": "deepseek-v3",
            "T3": "gpt-4o-mini"}

NUMERIC = {"density", "clustering_coefficient", "average_path_length", "diameter", "modularity"}


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(SUITE_ROOT)


def record(level: int, constraints: list[str], **more: Any) -> Instruction:
    inst = instruction_from_record({"id": f"L{level}-900", "level": level,
                                    "instruction": "Generate a graph.",
                                    "explicit_constraints": constraints, **more})
    assert inst is not None
    return inst


def first_of_row(suite: Suite, row: str) -> Instruction:
    """A real instruction of ``row`` whose extras all have content (L3: a numeric property;
    L4: a domain with a prior)."""
    for inst in suite:
        if row_of(inst) != row:
            continue
        if row == "L3" and not NUMERIC & {c.key for c in inst.explicit}:
            continue
        if row == "L4" and inst.domain in (None, "general"):
            continue
        return inst
    raise AssertionError(f"the suite has no instruction of row {row}")


# -- the table ---------------------------------------------------------------------------------

def test_the_packaged_table_holds_exactly_the_papers_cells() -> None:
    table = default_table()
    assert set(table.rules) == {Cell(r, t) for r in ROWS for t in TIERS}
    got = {(c.row, c.tier): (r.strategy, r.extras) for c, r in table.rules.items()}
    assert got == PAPER
    assert table.default_tier == "T2-GPT"
    assert table.simple_graph_types == {"tree", "cycle", "star", "path", "complete"}


def test_the_table_ships_as_package_data() -> None:
    assert DATA.is_file()
    assert wheel_ships(f"methods/data/{DATA.name}")
    assert load_table(DATA) == default_table()


@pytest.mark.parametrize(("row", "tier"), sorted(PAPER))
def test_caap_decides_every_cell_as_the_paper(suite: Suite, row: str, tier: str) -> None:
    inst = first_of_row(suite, row)
    d = select(inst, MODEL_OF[tier])
    strategy, extras = PAPER[row, tier]
    assert d.cell == Cell(row, tier)
    assert d.strategy == strategy
    assert tuple(name for name, _ in d.extras) == extras
    assert all(text.strip() for _, text in d.extras)
    assert d.rationale.strip()


@pytest.mark.parametrize("graph_type", ["tree", "cycle", "star", "path", "complete"])
def test_l1_simple_types_are_zero_shot_for_every_tier(graph_type: str) -> None:
    inst = record(1, [f"graph_type={graph_type}", "num_nodes=6"])
    for tier, model in MODEL_OF.items():
        d = select(inst, model)
        assert (d.cell, d.strategy) == (Cell("L1-simple", tier), ZS)


@pytest.mark.parametrize("constraints", [
    ["graph_type=wheel", "num_nodes=6"], ["graph_type=dag", "num_nodes=6"],
    ["num_nodes=6", "connected=true"],  # no graph type at all
    ["graph_type!=tree", "num_nodes=6"],  # a negated simple type is not a simple type
])
def test_other_l1_instructions_are_complex(constraints: list[str]) -> None:
    inst = record(1, constraints)
    assert row_of(inst) == "L1-complex"
    assert select(inst, "gpt-4o").strategy == FS


def test_every_suite_decision_is_complete(suite: Suite) -> None:
    for inst in suite:
        for model in MODEL_OF.values():
            d = select(inst, model)
            assert d.strategy in STRATEGIES
            assert d.rationale.strip(), (inst.id, model)
            names = [n for n, _ in d.extras]
            assert names == [x for x in EXTRAS if x in names], (inst.id, model)
            assert d.cell == Cell(row_of(inst), model_tier(model))


# -- model tiers -------------------------------------------------------------------------------

@pytest.mark.parametrize(("model", "tier"), [
    ("claude-sonnet-4-6", "T1"), ("claude-sonnet-4-5", "T1"),
    ("claude-sonnet-4-5-20250929", "T1"), ("claudesonnet46", "T1"),
    ("qwen3.5-397b", "T1"), ("qwen-3.5-397b", "T1"), ("Qwen3.5-122B-A10B", "T1"),
    ("qwen35122ba10b", "T1"), ("QwenQwen35122BA10B", "T1"),
    ("gpt-4o", "T2-GPT"), ("GPT-4o", "T2-GPT"), ("gpt4o", "T2-GPT"), ("openai/gpt-4o", "T2-GPT"),
    ("gpt-4.1", "T2-GPT"), ("gpt-4-1", "T2-GPT"), ("gpt41", "T2-GPT"),
    ("qwen3.5-35b", "T2-open"), ("qwen3.5-35b-a3b", "T2-open"), ("qwen3535ba3b", "T2-open"),
    ("deepseek-v3", "T2-open"), ("deepseek-ai/DeepSeek-V3", "T2-open"),
    ("deepseekaideepseekv3", "T2-open"), ("llama-3-70b", "T2-open"),
    ("meta-llama/Llama-3.3-70B-Instruct-Turbo", "T2-open"),
    ("metallamaLlama3370BInstructTurbo", "T2-open"),
    ("gpt-3.5-turbo", "T3"), ("gpt35turbo", "T3"), ("gpt-4o-mini", "T3"), ("GPT-4O-MINI", "T3"),
    ("gpt-4o-mini-2024-07-18", "T3"), ("gpt4omini", "T3"), ("llama-3-8b", "T3"),
    ("meta-llama/Meta-Llama-3.1-8B-Instruct", "T3"), ("metallamaMetaLlama318BInstruct", "T3"),
    ("local", "T3"),
])
def test_model_tiers_and_aliases(model: str, tier: str) -> None:
    assert model_tier(model) == tier


@pytest.mark.parametrize("model", ["my-finetune", "claude-sonnet-4-20250514", "gpt-5", "",
                                   "gpt-4o-minimal"])
def test_an_unknown_model_gets_the_default_tier(model: str) -> None:
    assert model_tier(model) == "T2-GPT"


def test_an_unknown_model_is_decided_by_the_default_tiers_cells(suite: Suite) -> None:
    inst = suite["L2-001"]
    assert select(inst, "my-finetune") == select(inst, "gpt-4o")


def test_users_extend_and_override_tiers(suite: Suite) -> None:
    mine = {"my-finetune": "t3", "GPT-4o": "T1", "acme/Big-Model": "T2-open"}
    assert model_tier("my-finetune", mine) == "T3"
    assert model_tier("My_Finetune-2025-01-02", mine) == "T3"
    assert model_tier("gpt-4o", mine) == "T1"  # the user's word beats the table's
    assert model_tier("openai/gpt-4o", mine) == "T1"
    assert model_tier("big-model", {"big-model": "T2-open"}) == "T2-open"
    assert model_tier("gpt-4o-mini", mine) == "T3"  # untouched entries stay
    d = select(suite["L2-001"], "my-finetune", tiers=mine)
    assert d.cell == Cell("L2", "T3")
    assert [n for n, _ in d.extras] == ["checklist"]


def test_a_user_tier_that_is_not_a_tier_is_a_clear_error() -> None:
    with pytest.raises(GraphInstructError, match=r"'my-model' is mapped to 'T4'"):
        model_tier("x", {"my-model": "T4"})


# -- extras ------------------------------------------------------------------------------------

def test_the_checklist_lists_every_explicit_constraint_as_written(suite: Suite) -> None:
    for inst in suite.level(2):
        extras = dict(select(inst, "gpt-4o-mini").extras)
        lines = extras["checklist"].splitlines()
        items = [line for line in lines if re.match(r"^\d+\. \[ \] ", line)]
        assert items == [f"{i}. [ ] {c.text}" for i, c in enumerate(inst.explicit, 1)]
        assert "count" in lines[-1].lower()


def test_the_formula_names_exactly_the_numeric_properties_of_the_constraints(
        suite: Suite) -> None:
    labels = {"density": "density", "clustering_coefficient": "clustering coefficient",
              "average_path_length": "average path length", "diameter": "diameter",
              "modularity": "modularity"}
    seen: set[str] = set()
    for inst in suite.level(3):
        extras = dict(select(inst, "gpt-4o-mini").extras)
        named = {c.key for c in inst.explicit} & NUMERIC
        seen |= named
        if not named:
            assert "formula" not in extras
            continue
        bullets = [b for b in extras["formula"].splitlines() if b.startswith("- ")]
        assert sorted(b[2:].split(":")[0] for b in bullets) == sorted(labels[k] for k in named)
    assert seen == NUMERIC  # the suite exercises every property


def test_a_repeated_property_gets_one_bullet() -> None:
    inst = record(3, ["num_nodes=10", "density>=0.2", "density<=0.4"])
    text = dict(select(inst, "gpt-4o-mini").extras)["formula"]
    assert text.count("- density:") == 1


def test_no_numeric_property_means_no_formula_but_still_a_decision() -> None:
    inst = record(3, ["num_nodes=10", "connected=true"])
    d = select(inst, "gpt-4o-mini")
    assert (d.cell, d.strategy, d.extras) == (Cell("L3", "T3"), ZC, ())
    assert d.rationale


def test_a_known_domain_gets_its_rendered_prior(suite: Suite) -> None:
    for inst in suite.level(4):
        for model in MODEL_OF.values():
            extras = dict(select(inst, model).extras)
            assert inst.domain in DOMAINS - {"general"}
            assert extras == {"domain": render_prior(inst.domain, inst.num_nodes)}
            assert f"({inst.num_nodes} nodes)" in extras["domain"]


@pytest.mark.parametrize("domain", [None, "general"])
def test_no_prior_means_no_domain_extra(domain: str | None) -> None:
    more = {"domain": domain} if domain else {}
    inst = record(4, ["num_nodes=20", "density<=0.3"], **more)
    d = select(inst, "gpt-4o")
    assert (d.strategy, d.extras) == (FS, ())


def test_a_domain_constraint_counts_when_the_field_is_absent() -> None:
    inst = record(4, ["num_nodes=20", "domain=social"])
    assert dict(select(inst, "gpt-4o").extras)["domain"] == render_prior("social", 20)


def test_extras_are_only_where_the_table_puts_them(suite: Suite) -> None:
    # every level-2/3 instruction for a non-T3 model, and every L0/L1/L5 one for any model
    for inst in suite:
        for tier, model in MODEL_OF.items():
            if inst.level == 4 or (inst.level in (2, 3) and tier == "T3"):
                continue
            assert select(inst, model).extras == (), (inst.id, tier)


# -- malformed tables --------------------------------------------------------------------------

def _variant(old: str, new: str, count: int = 1) -> str:
    text = DATA.read_text(encoding="utf-8")
    assert old in text, old
    return text.replace(old, new, count)


L5_ALL = 'row = "L5"\ntiers = ["T2-GPT", "T2-open", "T1"]'


@pytest.mark.parametrize(("text", "message"), [
    ("version = 1\n[[cell]\n", r"not valid TOML"),
    (_variant("version = 1", "version = 2"), r"version must be 1"),
    (_variant("version = 1", "version = 1\ncolour = 3"), r"unknown key 'colour'"),
    (_variant('default_tier = "T2-GPT"', 'default_tier = "T9"'), r"default_tier: tier 'T9'"),
    (_variant(L5_ALL, 'row = "L5"\ntiers = ["T2-GPT", "T2-open"]'), r"no rule for cell L5/T1$"),
    (_variant(L5_ALL, 'row = "L5"\ntiers = ["T2-GPT", "T2-open", "T1", "T3"]'),
     r"cell L5/T3 is given twice"),
    (_variant('strategy = "few-cot"', 'strategy = "tree-of-thought"'),
     r"strategy 'tree-of-thought' is not one of"),
    (_variant('extras = ["checklist"]', 'extras = ["scratchpad"]'),
     r"extra 'scratchpad' is not one of"),
    (_variant('rationale = "L0:', 'rationale = "  "\nnote = "L0:'), r"unknown key 'note'"),
    (_variant('rationale = "L5: few-CoT has the highest signed effect (+0.045)"',
              'rationale = ""'), r"rationale must be a non-empty string"),
    (_variant('row = "L0"', 'row = "L6"'), r"row 'L6' is not one of"),
    (_variant('T3 = [', 'T3 = [\n    "gpt-4o",'), r"'gpt-4o' is listed under both T2-GPT and T3"),
    (_variant('T3 = [', 'T4 = ["x"]\nT3 = ['), r"tier 'T4' is not one of"),
    ("version = 1\ndefault_tier = 'T1'\nl1_simple_graph_types = ['tree']\n",
     r"no \[\[cell\]\] entries"),
])
def test_a_malformed_table_is_a_one_line_error(text: str, message: str) -> None:
    with pytest.raises(GraphInstructError) as info:
        parse_table(text, source="mine.toml")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("CAAP table mine.toml: ")
    assert re.search(message, msg), msg
    assert isinstance(info.value, CaapTableError)


def test_an_unreadable_table_file_is_a_one_line_error(tmp_path: Path) -> None:
    with pytest.raises(GraphInstructError, match=r"^CAAP table .*missing\.toml: cannot read"):
        load_table(tmp_path / "missing.toml")


def test_a_users_own_table_decides(tmp_path: Path, suite: Suite) -> None:
    path = tmp_path / "caap.toml"
    path.write_text(_variant('row = "L0"\ntiers = ["T1", "T2-GPT", "T2-open", "T3"]\n'
                             'strategy = "zero-shot"',
                             'row = "L0"\ntiers = ["T1", "T2-GPT", "T2-open", "T3"]\n'
                             'strategy = "few-cot"'), encoding="utf-8")
    table = load_table(path)
    assert select(suite.level(0)[0], "gpt-4o", table=table).strategy == FC
    assert select(suite.level(0)[0], "gpt-4o").strategy == ZS


def test_augment_places_the_extras_around_the_prompt() -> None:
    from pytest_graphinstruct.answers import Message
    from pytest_graphinstruct.methods.caap import CaapDecision, Cell, augment

    decision = CaapDecision("few-shot", (("checklist", "CHECK"), ("formula", "FORMULA"),
                                         ("domain", "DOMAIN")), "why", Cell("L4", "T3"))
    out = augment((Message("system", "S"), Message("user", "PROMPT")), decision)
    assert out[0] == Message("system", "S")
    assert out[1].content == "DOMAIN\n\nPROMPT\n\nFORMULA\n\nCHECK"
    plain = CaapDecision("zero-shot", (), "why", Cell("L0", "T3"))
    assert augment((Message("user", "P"),), plain) == (Message("user", "P"),)
