"""Prompt texts: template overrides (prompts/texts.py, --gi-prompts)."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_overrides_replace_packaged_templates_until_reset(tmp_path: Path) -> None:
    from pytest_graphinstruct.prompts.texts import template, use_overrides

    packaged = template("system_default").template
    (tmp_path / "system_default.txt").write_text("Be a poet.\n$format\n", encoding="utf-8")
    try:
        assert use_overrides(tmp_path) == ("system_default",)
        assert template("system_default").template == "Be a poet.\n$format"
    finally:
        use_overrides(None)
    assert template("system_default").template == packaged


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
    from pytest_graphinstruct.prompts.texts import render_section, template, use_overrides

    (tmp_path / name).write_text(text, encoding="utf-8")
    try:
        with pytest.raises(ValueError, match=message):
            use_overrides(tmp_path)
    finally:
        use_overrides(None)
    assert "graph" in template("system_default").template
    assert render_section("feedback", "refinement", round=2, notes="x") == "Round 2 — x"
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no"):
        use_overrides(tmp_path / "empty")
    with pytest.raises(ValueError, match="is not a folder"):
        use_overrides(tmp_path / "missing")


def test_overrides_reach_the_method_texts(tmp_path: Path) -> None:
    from pytest_graphinstruct.methods.iterative import refinement_messages
    from pytest_graphinstruct.prompts.texts import use_overrides

    (tmp_path / "feedback.txt").write_text("=== refinement ===\nTry $round: $notes\n",
                                          encoding="utf-8")
    try:
        use_overrides(tmp_path)
        assert refinement_messages((), "p", "fix it", 2)[-1].content == "Try 2: fix it"
    finally:
        use_overrides(None)
    assert refinement_messages((), "p", "fix it", 2)[-1].content == "Round 2 — fix it"


def test_a_partial_sectioned_override_keeps_the_packaged_sections(tmp_path: Path) -> None:
    from pytest_graphinstruct.prompts.texts import render_section, sections, use_overrides

    packaged = dict(sections("feedback"))
    (tmp_path / "feedback.txt").write_text("=== refinement ===\nTry $round: $notes\n",
                                          encoding="utf-8")
    try:
        use_overrides(tmp_path)
        assert list(sections("feedback")) == list(packaged)  # every section is still there
        assert render_section("feedback", "refinement", round=2, notes="x") == "Try 2: x"
        assert (sections("feedback")["fine_header"].template
                == packaged["fine_header"].template)
    finally:
        use_overrides(None)


@pytest.mark.parametrize(("module", "not_loaded"), [
    ("pytest_graphinstruct.methods.caap", ("pytest_graphinstruct.prompts.builder", "numpy")),
    ("pytest_graphinstruct.methods.feedback", ("pytest_graphinstruct.prompts.builder",)),
])
def test_reading_the_texts_does_not_load_the_prompt_builder(module: str,
                                                           not_loaded: tuple[str, ...]) -> None:
    import subprocess
    import sys

    code = f"import sys, {module}; print(sorted(m for m in {not_loaded!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
