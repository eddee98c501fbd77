"""Prompt texts: the run's template set, packaged texts with --gi-prompts overrides over them
(prompts/texts.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.prompts.texts import PACKAGED, TemplateSet
from tests.fresh_python import fresh_python


def test_overrides_replace_packaged_templates_in_their_set_only(tmp_path: Path) -> None:
    packaged = PACKAGED.template("system_default").template
    (tmp_path / "system_default.txt").write_text("Be a poet.\n$format\n", encoding="utf-8")
    mine = TemplateSet.from_folder(tmp_path)
    assert mine.names == ("system_default",) and mine.folder == tmp_path
    assert mine.template("system_default").template == "Be a poet.\n$format"
    assert mine.template("anti_laziness").template == PACKAGED.template("anti_laziness").template
    # the override's set is a value: the packaged one, and a set built later, are untouched
    assert PACKAGED.template("system_default").template == packaged
    assert TemplateSet().template("system_default").template == packaged
    assert mine == TemplateSet.from_folder(tmp_path) and mine != PACKAGED


@pytest.mark.parametrize(("name", "text", "message"), [
    ("nonsense.txt", "x", "is not a prompt template"),
    ("refusal_reasons.txt", "text before a header", "text before the first section header"),
    # an override that would fail when filled
    ("feedback.txt", "=== refinement ===\nTry $round $notes $who\n",
     r"feedback.txt, section 'refinement': unknown \$who \(the packaged text may use "
     r"\$round, \$notes\)"),
    ("system_default.txt", "Be a $poet.\n", r"system_default.txt: unknown \$poet"),
    ("feedback.txt", "=== refinment ===\nTry $round $notes\n", "no packaged section 'refinment'"),
    ("feedback.txt", "=== refinement ===\nCost: 5$ $round $notes\n", "write '\\$\\$'"),
])
def test_bad_overrides_are_refused_at_once(tmp_path: Path, name: str, text: str,
                                           message: str) -> None:
    (tmp_path / name).write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        TemplateSet.from_folder(tmp_path)
    with pytest.raises(ValueError, match=message):  # a set made from texts is checked too
        TemplateSet(((Path(name).stem, text),))
    assert "graph" in PACKAGED.template("system_default").template
    assert PACKAGED.render_section("feedback", "refinement", round=2, notes="x") == "Round 2 — x"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no"):
        TemplateSet.from_folder(tmp_path / "empty")
    with pytest.raises(ValueError, match="is not a folder"):
        TemplateSet.from_folder(tmp_path / "missing")


def test_overrides_reach_the_method_texts(tmp_path: Path) -> None:
    from pytest_graphinstruct.methods.iterative import refinement_messages

    (tmp_path / "feedback.txt").write_text("=== refinement ===\nTry $round: $notes\n",
                                          encoding="utf-8")
    mine = TemplateSet.from_folder(tmp_path)
    assert refinement_messages((), "p", "fix it", 2, mine)[-1].content == "Try 2: fix it"
    assert refinement_messages((), "p", "fix it", 2)[-1].content == "Round 2 — fix it"


def test_overrides_reach_the_strategy_prompts(tmp_path: Path) -> None:
    from pytest_graphinstruct.prompts.builder import build_messages
    from pytest_graphinstruct.suite.loader import load_suite

    inst = next(iter(load_suite(Path(__file__).resolve().parents[2] / "instructions",
                                levels=[1])))
    (tmp_path / "cot_suffix.txt").write_text("Think hard.\n", encoding="utf-8")
    mine = TemplateSet.from_folder(tmp_path)
    assert build_messages(inst, "zero-cot", templates=mine)[1].content.endswith("Think hard.")
    assert not build_messages(inst, "zero-cot")[1].content.endswith("Think hard.")


def test_a_partial_sectioned_override_keeps_the_packaged_sections(tmp_path: Path) -> None:
    packaged = dict(PACKAGED.sections("feedback"))
    (tmp_path / "feedback.txt").write_text("=== refinement ===\nTry $round: $notes\n",
                                          encoding="utf-8")
    mine = TemplateSet.from_folder(tmp_path)
    assert list(mine.sections("feedback")) == list(packaged)  # every section is still there
    assert mine.render_section("feedback", "refinement", round=2, notes="x") == "Try 2: x"
    assert mine.sections("feedback")["fine_header"].template == packaged["fine_header"].template


def test_an_unknown_template_or_section_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="no prompt template 'nope'"):
        PACKAGED.render("nope")
    with pytest.raises(KeyError, match=r"no section 'nope' in feedback\.txt"):
        PACKAGED.render_section("feedback", "nope")


@pytest.mark.parametrize(("module", "not_loaded"), [
    ("pytest_graphinstruct.methods.caap", ("pytest_graphinstruct.prompts.builder", "numpy")),
    ("pytest_graphinstruct.methods.feedback", ("pytest_graphinstruct.prompts.builder",)),
])
def test_reading_the_texts_does_not_load_the_prompt_builder(module: str,
                                                           not_loaded: tuple[str, ...]) -> None:

    code = f"import sys, {module}; print(sorted(m for m in {not_loaded!r} if m in sys.modules))"
    out = fresh_python(code)
    assert out == "[]", out


def test_a_set_hashes_by_what_it_overrides_not_where_it_lies(tmp_path: Path) -> None:
    assert PACKAGED.sha256() is None
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "system_default.txt").write_text("Be a poet.\n$format\n",
                                                           encoding="utf-8")
    a, b = (TemplateSet.from_folder(tmp_path / n) for n in ("a", "b"))
    digest = a.sha256()
    assert digest is not None and digest.startswith("sha256:") and len(digest) == 71
    assert b.sha256() == digest  # the same texts in another folder: the same set
    (tmp_path / "b" / "system_default.txt").write_text("Be a painter.\n$format\n",
                                                       encoding="utf-8")
    assert TemplateSet.from_folder(tmp_path / "b").sha256() != digest
    # a name and its text are kept apart: moving a character between them is another set
    assert TemplateSet((("system_default", "x$format"),)).sha256() != digest
