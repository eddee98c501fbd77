"""The models table: the packaged entries, names as the release spells them, one tier source,
users' extensions and overrides, malformed files."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_graphinstruct.methods.caap import model_tier
from pytest_graphinstruct.report.analyses.models_table import (
    ModelsTableError,
    load_models_table,
    packaged_entries,
    paper_tier,
    parse_models_table,
)

# Paper §3.1: the twelve models and their tiers, by the release's file-name spelling.
PAPER_MODELS = {
    "claudesonnet46": ("Sonnet-4.6", "Claude", "T1"),
    "qwen35397ba17b": ("Qwen3.5-397B", "Qwen3.5", "T1"),
    "qwen35122ba10b": ("Qwen3.5-122B", "Qwen3.5", "T1"),
    "qwen3535ba3b": ("Qwen3.5-35B", "Qwen3.5", "T2"),
    "gpt41": ("GPT-4.1", "GPT", "T2"),
    "gpt4o": ("GPT-4o", "GPT", "T2"),
    "deepseekaiDeepSeekV3": ("DeepSeek-V3", "DeepSeek", "T2"),
    "metallamaLlama3370BInstructTurbo": ("Llama-3.3-70B", "Llama", "T2"),
    "claudesonnet420250514": ("Sonnet-4", "Claude", "T2"),
    "gpt35turbo": ("GPT-3.5", "GPT", "T3"),
    "gpt4omini": ("GPT-4o-mini", "GPT", "T3"),
    "metallamaMetaLlama318BInstruct": ("Llama-3.1-8B", "Llama", "T3"),
}


@pytest.mark.parametrize("file_name", sorted(PAPER_MODELS))
def test_release_file_names_map_to_the_papers_models_and_tiers(file_name: str) -> None:
    info = load_models_table().info(file_name)
    assert (info.display, info.family, info.tier) == PAPER_MODELS[file_name]
    assert info.known


def test_tiers_come_from_the_caap_table() -> None:
    """Every packaged model's tier is what CAAP's own lookup gives (one source)."""
    for entry in packaged_entries():
        assert entry.caap_tier == model_tier(entry.key, {entry.key: entry.caap_tier}
                                             if entry.caap_tier else None)
        if entry.key != "claude-sonnet-4":  # the one model caap.toml does not list
            assert entry.caap_tier == model_tier(entry.key)


def test_api_ids_csv_names_and_dated_aliases_resolve() -> None:
    table = load_models_table()
    assert table.info("Qwen3.5-397B-A17B").key == "qwen3.5-397b-a17b"
    assert table.info("gpt-4o-mini-2024-07-18").key == "gpt-4o-mini"
    assert table.info("meta-llama/Llama-3.3-70B-Instruct-Turbo").display == "Llama-3.3-70B"
    assert table.info("GPT_4o_Mini").key == "gpt-4o-mini"


def test_an_unknown_model_has_no_tier_unless_caap_lists_it() -> None:
    table = load_models_table()
    unknown = table.info("my-model")
    assert (unknown.display, unknown.family, unknown.tier, unknown.known) == \
        ("my-model", None, None, False)
    assert paper_tier("T2-open") == "T2" and paper_tier(None) is None


def test_a_user_table_extends_and_overrides(tmp_path: Path) -> None:
    user = tmp_path / "models.toml"
    user.write_text('''
[[model]]
key = "my-model"
display = "Mine"
family = "Home"
scale = 7
tier = "T3"

[[model]]
key = "gpt-4o"
display = "GPT-4o (ours)"
family = "OpenAI"
''', encoding="utf-8")
    table = load_models_table([user])
    mine = table.info("MY_MODEL")
    assert (mine.display, mine.family, mine.scale, mine.tier) == ("Mine", "Home", 7.0, "T3")
    gpt = table.info("gpt4o")
    assert (gpt.display, gpt.family, gpt.tier) == ("GPT-4o (ours)", "OpenAI", "T2")
    assert table.info("gpt4omini").display == "GPT-4o-mini"  # the rest stays


@pytest.mark.parametrize(("text", "message"), [
    ("[[model]]\nkey = 'gpt-4o'\ntier = 'T1'\n", "already lists it as T2-GPT"),
    ("[[model]]\nkey = 'x'\ntier = 'T9'\n", "not one of"),
    ("[[model]]\nkey = 'x'\ncolour = 'red'\n", "unknown field"),
    ("[[model]]\nkey = 'a'\naliases = ['b']\n[[model]]\nkey = 'B'\n", "belongs to both"),
    ("[[model]]\nkey = 'a'\nscale = -1\n", "positive number"),
    ("[[model]]\ndisplay = 'a'\n", "'key'"),
    ("model = 3\n", "array of tables"),
    ("this is = not toml =", "not TOML"),
])
def test_malformed_tables_are_one_line_errors(text: str, message: str) -> None:
    with pytest.raises(ModelsTableError, match=message) as info:
        parse_models_table(text, source="user.toml")
    assert "\n" not in str(info.value) and str(info.value).startswith("user.toml")


def test_an_unreadable_table_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(ModelsTableError, match="cannot be read"):
        load_models_table([tmp_path / "absent.toml"])
