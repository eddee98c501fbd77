"""The ci/ kit: ci/README.md's table of repository variables agrees with both CI files.

The README promises that ``GI_MODEL``, ``GI_BASE_URL``, ``GI_STRATEGY`` … are variables a user
sets; the GitHub workflow must read each from ``vars`` with the README's default, and the GitLab
file must define it (a project CI/CD variable overrides it) with the README's default.  Parsed
with regular expressions over the files' simple shapes (PyYAML is not a dependency).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "ci" / "README.md"
GITHUB = ROOT / "ci" / "github" / "graphinstruct.yml"
GITLAB = ROOT / "ci" / "gitlab" / "graphinstruct.gitlab-ci.yml"


def _cell(text: str) -> str:
    """A table cell's value: the text inside its first backticks, or "" for "empty"."""
    text = text.strip()
    if text == "empty":
        return ""
    found = re.match(r"`([^`]*)`", text)
    assert found, f"the README's default {text!r} is neither `value` nor empty"
    return found.group(1)


def readme_table() -> dict[str, tuple[str, str]]:
    """``{variable: (GitHub default, GitLab default)}`` from the README's variables table."""
    rows: dict[str, tuple[str, str]] = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`GI_[A-Z_]+`", cells[0]):
            rows[cells[0].strip("`")] = (_cell(cells[1]), _cell(cells[2]))
    return rows


def github_vars() -> dict[str, str]:
    """``{variable: default}`` of every ``${{ vars.NAME || 'default' … }}`` in the workflow
    (the first quoted literal after ``||`` is the default)."""
    found: dict[str, str] = {}
    for name, rest in re.findall(r"\$\{\{\s*vars\.(\w+)\s*\|\|(.*?)\}\}",
                                 GITHUB.read_text(encoding="utf-8")):
        literal = re.search(r"'([^']*)'", rest)
        assert literal, f"vars.{name} has no quoted default in {GITHUB.name}"
        found.setdefault(name, literal.group(1))
    return found


def github_env() -> dict[str, str]:
    """The workflow's top-level ``env:`` block, ``{NAME: raw value}``."""
    return _block(GITHUB.read_text(encoding="utf-8"), "env")


def gitlab_variables() -> dict[str, str]:
    """The GitLab file's top-level ``variables:`` block, ``{NAME: value}`` (quotes removed)."""
    return {k: v.strip('"') for k, v in
            _block(GITLAB.read_text(encoding="utf-8"), "variables").items()}


def _block(text: str, key: str) -> dict[str, str]:
    lines = text.splitlines()
    start = lines.index(f"{key}:")
    out: dict[str, str] = {}
    for line in lines[start + 1:]:
        if line and not line.startswith(" "):
            break
        entry = re.match(r"  (\w+): (.*)$", line)
        if entry:
            out[entry.group(1)] = entry.group(2).strip()
    return out


def test_the_readme_lists_the_model_variables() -> None:
    assert {"GI_MODEL", "GI_MODEL_VERSION", "GI_BASE_URL", "GI_STRATEGY",
            "GI_PLUGIN_REPOSITORY", "GI_PLUGIN_REF"} <= set(readme_table())


def test_the_github_workflow_reads_every_listed_variable_with_the_readme_default() -> None:
    table, used = readme_table(), github_vars()
    assert set(used) == set(table), "vars read by the workflow vs the README's table"
    for name, (github_default, _) in table.items():
        assert used[name] == github_default, name


def test_the_github_workflow_hard_codes_no_listed_variable() -> None:
    env = github_env()
    for name in readme_table():
        if name in env:
            assert env[name].startswith("${{ vars." + name + " ||"), (name, env[name])


def test_the_gitlab_file_defines_every_listed_variable_with_the_readme_default() -> None:
    variables = gitlab_variables()
    for name, (_, gitlab_default) in readme_table().items():
        assert variables.get(name) == gitlab_default, name


def test_the_plugin_is_pinned_to_this_release_not_a_branch() -> None:
    """The kit installs the plugin from a tag (the release it was written for), never a branch
    that moves under a committed baseline (issue 49 §5)."""
    from pytest_graphinstruct import __version__

    github_default, gitlab_default = readme_table()["GI_PLUGIN_REF"]
    assert github_default == gitlab_default == f"v{__version__}"
    assert github_vars()["GI_PLUGIN_REF"] == github_default
    assert gitlab_variables()["GI_PLUGIN_REF"] == github_default
    assert f"--branch v{__version__}" in README.read_text(encoding="utf-8")


def test_pip_downloads_are_cached_across_jobs() -> None:
    github = GITHUB.read_text(encoding="utf-8")
    assert github.count("cache: pip") == github.count("actions/setup-python@") == 2
    gitlab = GITLAB.read_text(encoding="utf-8")
    assert gitlab.count("- .cache/pip/") == 2 and "PIP_CACHE_DIR" in gitlab
