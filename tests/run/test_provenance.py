"""Run provenance: the RunInfo record (round trip, schema) and the helpers that fill it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.provenance import (
    cache_use,
    cached_samples,
    endpoints,
    git_state,
    machine,
    public_url,
    run_info,
    spend,
    suite_hash,
    utc_now,
)
from pytest_graphinstruct.run.records.reader import parse_report
from pytest_graphinstruct.run.records.results import (
    CacheUse,
    Coverage,
    FingerprintChange,
    GitState,
    ItemFilter,
    ItemResult,
    Machine,
    RunInfo,
    RunReport,
    SampleResult,
    Spend,
)
from pytest_graphinstruct.run.records.writer import report_json
from pytest_graphinstruct.suite.loader import load_suite
from tests.report.schema_check import assert_valid_report, report_errors

FULL = RunInfo(
    started="2025-03-04T05:06:07+00:00", finished="2025-03-04T05:16:07+00:00",
    machine=Machine("host", "Linux-x86_64", "CPython 3.11.7", 16),
    suite="/suite", suite_hash="sha256:" + "ab" * 32,
    git=GitState("0123456789abcdef0123456789abcdef01234567", dirty=True),
    endpoints={"gpt": "https://api.example.com/v1", "oracle": None},
    filter=ItemFilter(keyword="L1 and not L1-002", markers="level1", levels=(1, 2),
                      per_level=3, selected=5),
    pools="/pools", replay=None, cache_dir="/cache",
    cache={"gpt-zero-shot": CacheUse(cached=2, samples=5)},
    spend={"gpt": Spend(requests=3, retries=0, input_tokens=300, output_tokens=90,
                        cost=0.0017, currency="USD", cached=2)},
    fingerprint_changes={"gpt": FingerprintChange("gpt-2024", "fp_new", {"fp_old": 2})},
)


@pytest.mark.parametrize("info", [FULL, RunInfo()], ids=["full", "empty"])
def test_run_info_round_trips_and_is_schema_valid(info: RunInfo) -> None:
    report = RunReport((), coverage=Coverage(selected=0), run=info)
    data = json.loads(report_json(report))
    assert_valid_report(data)
    back = RunReport.from_json(data)
    assert back.run == info
    assert back == report


def test_cached_samples_total() -> None:
    assert FULL.cached_samples == 2
    assert RunInfo().cached_samples == 0


def test_a_report_without_run_reads_back_with_none() -> None:
    data = RunReport(()).to_json()
    assert data["run"] is None
    assert_valid_report(data)
    del data["run"]  # a report written before the record existed: still read
    assert parse_report(data).run is None


@pytest.mark.parametrize(("path", "value"), [
    (("machine", "cpu_count"), 0),
    (("suite_hash",), "md5:abc"),
    (("git", "commit"), "not a sha"),
    (("cache", "gpt-zero-shot", "cached"), -1),
    (("filter", "levels"), [7]),
    (("endpoints", "gpt"), 3),
])
def test_schema_rejects_bad_run_values(path: tuple[str, ...], value: object) -> None:
    data = RunReport((), run=FULL).to_json()
    node = data["run"]
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert report_errors(data)


def test_utc_now_and_machine() -> None:
    from datetime import datetime

    offset = datetime.fromisoformat(utc_now()).utcoffset()
    assert offset is not None and offset.total_seconds() == 0
    m = machine()
    assert m.python is not None and m.python.split()[-1].count(".") == 2
    assert m.cpu_count is None or m.cpu_count >= 1


@pytest.mark.parametrize(("url", "shown"), [
    ("https://user:sk-SECRET@api.example.com:8443/v1?key=sk-SECRET#frag",
     "https://api.example.com:8443/v1"),
    ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ("http://[::1]:9000/v1?api-key=x", "http://[::1]:9000/v1"),
    ("http://host:99999/v1", "<unparseable URL>"),
])
def test_public_url_drops_what_may_be_secret(url: str, shown: str) -> None:
    assert public_url(url) == shown


@given(user=st.text(alphabet="abcXYZ019-_", min_size=1, max_size=10),
       secret=st.text(alphabet="abcXYZ019-_", min_size=8, max_size=20))
def test_public_url_never_keeps_credentials_or_query(user: str, secret: str) -> None:
    shown = public_url(f"https://{user}:{secret}@h.example/v1?token={secret}&k={secret}")
    assert secret not in shown and "@" not in shown and "?" not in shown


def test_endpoints_per_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "s"
    suite.mkdir()
    (suite / "level_0.json").write_text("[]", encoding="utf-8")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    run = build_run_config({"model": "oracle,gpt-x,local",
                            "base_url": "https://u:pw@llm.example/v1?key=SECRET",
                            "suite": str(suite)}, rootdir=tmp_path)
    assert run is not None
    got = endpoints(run, {"base_url": "http://127.0.0.1:4567/v1"})
    assert got == {"oracle": None, "gpt-x": "https://llm.example/v1",
                   "local": "http://127.0.0.1:4567/v1"}
    default = build_run_config({"model": "gpt-x", "suite": str(suite)}, rootdir=tmp_path)
    assert default is not None
    assert endpoints(default) == {"gpt-x": "https://api.openai.com/v1"}
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.example:81/v1")
    assert endpoints(default) == {"gpt-x": "http://proxy.example:81/v1"}


def test_suite_hash_follows_the_level_files_used(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "instructions"
    if not (src / "level_0.json").is_file():
        pytest.skip("no project suite")
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        d.mkdir()
        for lv in (0, 1):
            shutil.copy(src / f"level_{lv}.json", d / f"level_{lv}.json")
    h = suite_hash(load_suite(a))
    assert h is not None and h.startswith("sha256:") and len(h) == 71
    assert suite_hash(load_suite(b)) == h  # same files elsewhere: same hash
    assert suite_hash(load_suite(a, levels=[1])) != h  # fewer files used
    text = (b / "level_1.json").read_text(encoding="utf-8")
    (b / "level_1.json").write_text(text.rstrip() + "\n\n", encoding="utf-8")
    assert suite_hash(load_suite(b)) != h  # any byte counts


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                   timeout=30)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_state(tmp_path: Path) -> None:
    assert git_state(tmp_path / "nowhere") is None
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    assert git_state(repo) is None  # no commit yet
    (repo / "f.txt").write_text("a", encoding="utf-8")
    _git(repo, "add", "f.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "x")
    state = git_state(repo)
    assert state is not None and len(state.commit) == 40 and state.dirty is False
    (repo / "untracked.json").write_text("{}", encoding="utf-8")
    assert git_state(repo) == GitState(state.commit, dirty=False)
    (repo / "f.txt").write_text("b", encoding="utf-8")
    assert git_state(repo) == GitState(state.commit, dirty=True)


def test_git_state_without_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on the PATH
    assert git_state(tmp_path) is None


def _item(cell: str, *cached: bool) -> ItemResult:
    return ItemResult(instruction_id="L1-001", level=1, cell=cell, model="m",
                      strategy="zero-shot",
                      samples=tuple(SampleResult(True, False, cached=c) for c in cached))


def test_cache_counts_per_cell() -> None:
    results = [_item("a", True, False), _item("a", True), _item("b", False)]
    assert cached_samples(results) == {"a": 2, "b": 0}
    assert cache_use(results, {"a": 2}) == {"a": CacheUse(2, 3), "b": CacheUse(0, 1)}


def test_spend_prices_what_was_sent_and_records_nothing_without_an_endpoint(
        tmp_path: Path) -> None:
    from pytest_graphinstruct.models.scheduling.request_stats import Sent

    assert spend(None, None) is None and spend({}, None) is None  # oracle, replay
    sent = {"gpt-4o": Sent(requests=3, retries=1, input_tokens=1_000_000,
                           output_tokens=100_000, cached=2),
            "my-finetune": Sent(requests=1, input_tokens=5, output_tokens=5)}
    out = spend(sent, None)  # the packaged table: gpt-4o has a price, the finetune none
    assert out is not None and list(out) == ["gpt-4o", "my-finetune"]
    from pytest_graphinstruct.models.cost.prices import load_prices

    price = load_prices().price("gpt-4o")
    assert price is not None
    assert out["gpt-4o"].cost == pytest.approx(price.cost(1_000_000, 100_000))
    assert (out["gpt-4o"].requests, out["gpt-4o"].retries, out["gpt-4o"].cached) == (3, 1, 2)
    assert out["gpt-4o"].currency == "USD"
    assert (out["my-finetune"].cost, out["my-finetune"].currency) == (None, None)
    table = tmp_path / "p.json"
    table.write_text(json.dumps({"currency": "EUR", "taken": "2025-01-01", "models": {
        "my-finetune": {"input_per_1m": 1e6, "output_per_1m": 2e6}}}), encoding="utf-8")
    mine = spend(sent, table)
    assert mine is not None and mine["my-finetune"].cost == 15.0
    assert mine["my-finetune"].currency == "EUR" and mine["gpt-4o"].cost is None


def test_spend_prices_batch_lines_at_the_batch_price_and_the_rest_at_list_price(
        tmp_path: Path) -> None:
    from pytest_graphinstruct.models.scheduling.request_stats import Sent

    table = tmp_path / "p.json"
    table.write_text(json.dumps({"currency": "USD", "taken": "2025-01-01", "models": {
        "m": {"input_per_1m": 1e6, "output_per_1m": 2e6, "batch_discount": 0.5}}}),
        encoding="utf-8")
    sent = {"m": Sent(requests=4, input_tokens=100, output_tokens=10, batch_input_tokens=60,
                      batch_output_tokens=6, batch_requests=3)}
    out = spend(sent, table)
    assert out is not None
    # 40 + 2·4 at list price, (60 + 2·6) · 0.5 at the batch price
    assert out["m"].cost == 48.0 + 36.0 and out["m"].batched == 3
    plain = spend({"m": Sent(requests=4, input_tokens=100, output_tokens=10)}, table)
    assert plain is not None and plain["m"].cost == 120.0 and plain["m"].batched is None


def test_run_info_carries_the_fingerprint_changes_it_is_given(tmp_path: Path) -> None:
    """Issue 47 §9: the preflight's change of system_fingerprint reaches the report's run
    record; none given (or none changed) writes nothing."""
    from tests.plugin._suite import write_suite

    run = build_run_config({"model": "oracle", "no_cache": True, "pools": "none",
                            "suite": str(write_suite(tmp_path / "suite"))}, rootdir=tmp_path)
    assert run is not None
    change = FingerprintChange("m-2024", "fp_2", {"fp_1": 3})
    def info(**extra: Any) -> RunInfo:
        return run_info(run, started=None, suite=None, rootdir=None, results=(),
                        item_filter=ItemFilter(), **extra)

    assert info(fingerprints={"m": change}).fingerprint_changes == {"m": change}
    assert info(fingerprints={}).fingerprint_changes is None
    assert info().fingerprint_changes is None
