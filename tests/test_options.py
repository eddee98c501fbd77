"""The option table (``pytest_graphinstruct.options``): every ``--gi-*`` option is one row, and
the pytest options, their help, the validation and the command line's values are made from it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pytest_graphinstruct import plugin
from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.options import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT_S,
    OPTION_BY_DEST,
    OPTIONS,
    Option,
    OptionValues,
    api_key_env_problem,
    parse_levels,
    redacted,
)
from pytest_graphinstruct.run.config import build_run_config, run_config


def test_every_row_is_named_once_and_has_help() -> None:
    for table in ([o.flag for o in OPTIONS], [o.dest for o in OPTIONS],
                  [o.ini_name for o in OPTIONS]):
        assert len(table) == len(set(table))
    for option in OPTIONS:
        assert option.help.strip() and option.help == option.help.strip(), option.flag
        assert option.flag.startswith("--gi-") and option.ini_name.startswith("gi_")
        assert (option.low is not None or option.high is not None) <= (
            option.kind in ("integer", "number", "integers", "samples")), option.flag
        assert bool(option.choices) == (option.kind in ("choice", "choices")), option.flag


def test_every_default_is_valid_and_within_its_bounds() -> None:
    for option in OPTIONS:
        value = option.parse(None)  # not given: the default, read like a given value
        if option.default is None:
            assert value in (None, False, ()), option.flag
        if isinstance(value, int | float) and not isinstance(value, bool):
            assert option.within(value), option.flag
        if option.kind == "choice":
            assert value in option.choices, option.flag


def test_the_defaults_the_help_names_are_the_constants() -> None:
    assert f"(default {DEFAULT_CONCURRENCY})" in OPTION_BY_DEST["concurrency"].help
    assert f"(default {DEFAULT_TIMEOUT_S:g};" in OPTION_BY_DEST["timeout"].help
    assert f"(default {DEFAULT_API_KEY_ENV})" in OPTION_BY_DEST["api_key_env"].help
    assert OptionValues({}).integer("concurrency") == DEFAULT_CONCURRENCY
    assert OptionValues({}).text("api_key_env") == DEFAULT_API_KEY_ENV


class _Recorder:
    """A stand-in for pytest's parser and its group: records what the plugin declares."""

    def __init__(self) -> None:
        self.options: dict[str, dict[str, object]] = {}
        self.inis: dict[str, dict[str, object]] = {}

    def getgroup(self, name: str, description: str) -> _Recorder:
        assert name == "graphinstruct"
        return self

    def addoption(self, flag: str, **kwargs: object) -> None:
        self.options[flag] = kwargs

    def addini(self, name: str, help: str, **kwargs: object) -> None:
        self.inis[name] = {"help": help, **kwargs}


def test_the_pytest_options_and_ini_keys_are_made_from_the_table() -> None:
    parser = _Recorder()
    plugin.pytest_addoption(parser)  # type: ignore[arg-type]
    assert list(parser.options) == [o.flag for o in OPTIONS]
    assert list(parser.inis) == [o.ini_name for o in OPTIONS if o.ini]
    for option in OPTIONS:
        declared = parser.options[option.flag]
        shown = option.help if option.surface == "flag" else argparse.SUPPRESS
        assert declared["dest"] == option.attr and declared["help"] == shown
        if option.ini:
            assert option.help in str(parser.inis[option.ini_name]["help"])
        assert (declared.get("action") == "store_true") == (option.kind == "flag")


def test_every_gi_option_pytest_knows_is_a_row(pytestconfig: pytest.Config) -> None:
    known = {name for name in vars(pytestconfig.option) if name.startswith("gi_")}
    assert known == {o.attr for o in OPTIONS}


@pytest.mark.parametrize(("dest", "raw", "message"), [
    ("samples", "0", "--gi-samples must be >= 1, got '0'"),
    ("samples", "101", "--gi-samples must be <= 100, got '101'"),
    ("samples", "2.5", "--gi-samples must be an integer, got '2.5'"),
    ("top_p", "0", "gi_top_p must be > 0, got '0'"),
    ("temperature", "nan", "--gi-temperature must be finite, got 'nan'"),
    ("backoff", "x", "gi_backoff must be a number, got 'x'"),
    ("pass_rule", "most", "--gi-pass must be one of all, majority, any, got 'most'"),
    ("progress", " loud ", "gi_progress must be one of auto, on, off, got 'loud'"),
    ("strategy", "zero-shot,bogus", "unknown --gi-strategy 'bogus' (choose from zero-shot, "
     "few-shot, zero-cot, few-cot)"),
    ("vgig_rounds", "1,51", "--gi-vgig-rounds must be <= 50, got '51'"),
    ("levels", "1,x", "--gi-levels must be a comma list of levels 0-5, got '1,x'"),
    ("levels", "7", "--gi-levels must name levels 0-5, got '7'"),
])
def test_a_bad_value_is_one_sentence_naming_the_flag(dest: str, raw: str,
                                                    message: str) -> None:
    with pytest.raises(GraphInstructError) as info:
        OPTION_BY_DEST[dest].parse(raw)
    assert str(info.value) == message


@pytest.mark.parametrize(("dest", "text", "typed"), [
    ("levels", "2, 0,2", [2, 0, 2]),
    ("levels", "7", [7]),
    ("concurrency", "16", 16),
    ("concurrency", "0", 0),
    ("timeout", "30", 30.0),
    ("strategy", "few-cot,zero-shot", ("few-cot", "zero-shot")),
    ("vgig_rounds", "1,3,1", (1, 3, 1)),
    ("suite", "~/suite", Path("~/suite")),
])
def test_the_command_line_and_pytest_accept_the_same_values(dest: str, text: str,
                                                            typed: object) -> None:
    """The CLI hands typed values, pytest texts: one row reads both alike, errors included."""
    option = OPTION_BY_DEST[dest]
    try:
        expected = option.parse(text)
    except GraphInstructError as exc:
        with pytest.raises(GraphInstructError) as typed_error:
            option.parse(typed)
        # the same sentence (a typed number is shown without the quotes of a text)
        assert str(typed_error.value).replace("'", "") == str(exc).replace("'", "")
    else:
        assert option.parse(typed) == expected


def test_a_replay_config_from_typed_values_equals_the_one_from_texts(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "level_0.json").write_text("[]", encoding="utf-8")
    answers = tmp_path / "m.answers.jsonl"
    answers.write_text("", encoding="utf-8")
    from_texts = build_run_config({"replay": str(answers), "suite": str(suite), "levels": "2,0",
                                   "pools": "none", "no_cache": True}, rootdir=tmp_path)
    from_values = run_config(OptionValues({"replay": answers, "suite": suite, "levels": [2, 0],
                                           "pools": "none", "no_cache": True}),
                             rootdir=tmp_path)
    assert from_values == from_texts
    assert from_values is not None and from_values.levels == (0, 2)
    assert from_values.cells[0].model == "m" and from_values.samples is None


def test_option_values_read_only_rows_of_their_kind() -> None:
    values = OptionValues({"concurrency": "4"})
    assert values.integer("concurrency") == 4 and values.given("concurrency")
    assert not values.given("timeout")
    with pytest.raises(TypeError):
        values.text("concurrency")
    with pytest.raises(KeyError):
        values.given("no_such_option")


def test_levels_are_parsed_in_one_place() -> None:
    assert parse_levels(" 2,0, ,2") == [2, 0, 2]
    with pytest.raises(ValueError):
        parse_levels("1,x")


def test_a_new_row_is_a_new_option() -> None:
    row = Option("max-widgets", "at most this many widgets", "integer", default=3, low=1)
    assert (row.flag, row.dest, row.attr, row.ini_name) == (
        "--gi-max-widgets", "max_widgets", "gi_max_widgets", "gi_max_widgets")
    assert row.parse(None) == 3 and row.parse("5") == 5
    with pytest.raises(GraphInstructError, match="--gi-max-widgets must be >= 1"):
        row.parse("0")


def test_a_command_line_argument_is_made_from_its_row() -> None:
    import argparse

    from pytest_graphinstruct.options import CliArgument, add_arguments, cli_values

    parser = argparse.ArgumentParser()
    add_arguments(parser, (CliArgument("concurrency"), CliArgument("pass_rule"),
                           CliArgument("replay", "answers file", flag="--responses",
                                       required=True),
                           CliArgument("strict")))
    actions = {a.dest: a for a in parser._actions}
    row = OPTION_BY_DEST["concurrency"]
    assert (actions["concurrency"].option_strings, actions["concurrency"].type,
            actions["concurrency"].default, actions["concurrency"].help) == (
        ["--concurrency"], int, DEFAULT_CONCURRENCY, row.help)
    assert actions["pass_rule"].choices == OPTION_BY_DEST["pass_rule"].choices
    assert actions["replay"].option_strings == ["--responses"] and actions["replay"].required
    assert actions["replay"].metavar == "RESPONSES" and actions["replay"].help == "answers file"
    args = parser.parse_args(["--responses", "a.jsonl", "--concurrency", "4", "--strict"])
    values = cli_values(args, (CliArgument("concurrency"), CliArgument("replay"),
                               CliArgument("strict")), no_cache=True)
    assert values.integer("concurrency") == 4 and values.path("replay") == Path("a.jsonl")
    assert values.flag("strict") and values.flag("no_cache")
    with pytest.raises(GraphInstructError, match="--gi-concurrency must be >= 1"):
        cli_values(parser.parse_args(["--responses", "a", "--concurrency", "0"]),
                   (CliArgument("concurrency"),)).integer("concurrency")


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GI_TEST_KEY", "my_key", "_K2",
                                  "AZURE_OPENAI_API_KEY_WESTEUROPE_2"])
def test_variable_names_are_taken(name: str) -> None:
    assert api_key_env_problem(name) is None


@pytest.mark.parametrize("value", [
    "sk-proj-Q7x2LmN4pR8sT1vW3yZ5aB6cD9eF0gH",  # not a variable name at all
    "gsk_Q7x2LmN4pR8sT1vW3yZ5",  # a known key prefix
    "Q7x2LmN4pR8sT1vW3yZ5aB6cD9eF",  # a long mix of cases and digits
    "my key", "2FAST",
])
def test_a_value_that_looks_like_the_key_is_refused_without_showing_it(value: str) -> None:
    why = api_key_env_problem(value)
    assert why is not None and "looks like the key itself" in why and "\n" not in why
    assert value not in why and (len(value) < 12 or value[3:] not in why)
    assert redacted(value) in why


def test_the_redacted_form_shows_three_characters_of_a_long_value_and_its_length() -> None:
    assert redacted("sk-0123456789abcdef") == "'sk-…' (19 characters)"
    assert redacted("short") == "'…' (5 characters)"


@pytest.mark.parametrize(("raw", "value"), [
    ("5", 5), (3, 3), ("auto", "auto"), (" auto ", "auto"), ("auto:3", "auto:3"), ("", None)])
def test_samples_are_a_count_or_auto(raw: object, value: object) -> None:
    assert OPTION_BY_DEST["samples"].parse(raw) == value


@pytest.mark.parametrize(("raw", "message"), [
    ("auto:0", "--gi-samples must be >= 1, got '0'"),
    ("autox", "--gi-samples must be an integer, auto or auto:N, got 'autox'"),
    ("auto:", "--gi-samples=auto:N needs N, got 'auto:'"),
    ("many", "--gi-samples must be an integer, got 'many'"),
])
def test_a_bad_sample_count_is_one_sentence(raw: str, message: str) -> None:
    with pytest.raises(GraphInstructError) as info:
        OPTION_BY_DEST["samples"].parse(raw)
    assert str(info.value) == message
