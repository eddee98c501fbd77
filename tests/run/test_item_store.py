"""The item store (run/item_store.py): what ``score`` keeps of each scored item and reads back."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import time
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.answers import Answer, Usage
from pytest_graphinstruct.graphs.model import Limits
from pytest_graphinstruct.run import item_store as ist
from pytest_graphinstruct.run import score_recorded as sr
from pytest_graphinstruct.run.config import Cell, build_run_config
from pytest_graphinstruct.run.evaluate import evaluate
from pytest_graphinstruct.run.item_store import ItemStore, item_key
from pytest_graphinstruct.run.records.results import ItemResult
from pytest_graphinstruct.run.score_recorded import score_recorded
from pytest_graphinstruct.score.gcn_store import ENV as D3_CACHE_ENV
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import constraints_of
from pytest_graphinstruct.verify.verifier import Verifier
from tests.plugin._suite import TREE4, write_suite
from tests.run.test_score_recorded import references_as_answers

INST = Instruction(id="L1-x", level=1, text="A tree of 4 nodes.",
                   explicit=constraints_of(["num_nodes=4", "graph_type=tree"]))
CELL = Cell("m", "zero-shot")
ANSWERS = (Answer(text=TREE4, usage=Usage(300, 20), calls=1),)


def _result() -> ItemResult:
    return evaluate(INST, ANSWERS, cell=CELL)


def test_a_stored_result_is_read_back_equal(tmp_path: Path) -> None:
    store = ItemStore(tmp_path, "f" * 64)
    result = _result()
    assert result.outcome == "passed"
    assert store.get("ab" * 32) is None
    assert store.put({"ab" * 32: result}) == 1
    assert store.get("ab" * 32) == result
    assert store.get("cd" * 32) is None
    assert ItemStore(tmp_path, "f" * 64).get("ab" * 32) == result  # another process's view
    assert ItemStore(tmp_path, "e" * 64).get("ab" * 32) is None  # other code: another store


def test_only_scored_items_are_kept(tmp_path: Path) -> None:
    store = ItemStore(tmp_path, "f" * 64)
    unscored = {outcome * 16: dataclasses.replace(_result(), outcome=outcome)
                for outcome in ("error", "skipped")}
    assert store.put(unscored) == 0
    assert all(store.get(key) is None for key in unscored)


@pytest.mark.parametrize("content", [b"", b"not zlib", zlib.compress(b"[1, 2]"),
                                     zlib.compress(b'{"instruction_id": 3}')])
def test_a_value_that_cannot_be_read_is_a_miss(tmp_path: Path, content: bytes) -> None:
    store = ItemStore(tmp_path, "f" * 64)
    store.put({"ab" * 32: _result()})
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE items SET value = ?", (content,))
    assert store.get("ab" * 32) is None


def test_a_database_that_is_not_one_is_a_miss_and_never_raises(tmp_path: Path) -> None:
    store = ItemStore(tmp_path, "f" * 64)
    store.path.write_bytes(b"this is not an SQLite database" * 100)
    assert store.put({"ab" * 32: _result()}) == 0
    assert store.get("ab" * 32) is None
    assert store.prune() == 0
    blocker = tmp_path / "file"
    blocker.write_text("x")
    unwritable = ItemStore(blocker / "sub", "f" * 64)  # a folder under a file
    assert unwritable.put({"ab" * 32: _result()}) == 0
    assert unwritable.get("ab" * 32) is None


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork only")
def test_a_forked_process_uses_its_own_connection(tmp_path: Path) -> None:
    store = ItemStore(tmp_path, "f" * 64)
    result = _result()
    store.put({"ab" * 32: result})  # the parent's connection is open
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: never returns into pytest
        code = 1
        try:
            ok = store.get("ab" * 32) == result and store.put({"cd" * 32: result}) == 1
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert store.get("cd" * 32) == result


def test_the_key_changes_with_everything_the_result_depends_on() -> None:
    base = {"instruction": INST, "cell": CELL, "answers": ANSWERS, "pass_rule": "all",
            "limits": Limits(), "pools": None}

    def key(**change: object) -> str:
        args = {**base, **change}
        return item_key(args.pop("instruction"), args.pop("cell"), args.pop("answers"),
                        **args)  # type: ignore[arg-type]

    pool = SimpleNamespace(name="l3", content_hash="0" * 64)
    variants = [
        key(),
        key(instruction=dataclasses.replace(INST, text="A tree of four nodes.")),
        key(instruction=dataclasses.replace(INST, references=(TREE4,))),
        key(cell=Cell("m", "few-shot")),
        key(cell=Cell("other", "zero-shot")),
        key(answers=(dataclasses.replace(ANSWERS[0], text=TREE4 + " "),)),
        key(answers=(dataclasses.replace(ANSWERS[0], usage=Usage(300, 21)),)),
        key(answers=(dataclasses.replace(ANSWERS[0], latency_s=1.5),)),
        key(answers=ANSWERS * 2),
        key(pass_rule="majority"),
        key(limits=Limits(max_nodes=10)),
        key(pools=SimpleNamespace(pools={3: pool})),
        key(pools=SimpleNamespace(pools={3: SimpleNamespace(name="l3", content_hash="1" * 64)})),
    ]
    assert len(set(variants)) == len(variants)
    assert key() == key(answers=tuple(ANSWERS))
    assert key() == key(instruction=dataclasses.replace(INST, source="/elsewhere/level_1.json"))


def test_prune_deletes_old_results_and_old_code_stores_once_a_day(tmp_path: Path) -> None:
    now = time.time()
    day = 86_400.0
    old_code = ItemStore(tmp_path, "0" * 64)
    old_code.put({"ab" * 32: _result()})
    old_code.close()
    stale = now - (ist.KEEP_DAYS + 1) * day
    for path in tmp_path.glob("items-0*"):
        os.utime(path, (stale, stale))
    store = ItemStore(tmp_path, "f" * 64)
    store.put({"ab" * 32: _result()}, now=now - (ist.KEEP_DAYS + 1) * day)
    store.put({"cd" * 32: _result()}, now=now - (ist.KEEP_DAYS - 1) * day)
    assert store.prune(now=now) == 1
    assert not list(tmp_path.glob("items-0*"))  # older code's store, unused for as long
    assert store.get("ab" * 32) is None and store.get("cd" * 32) is not None
    assert store.prune(now=now + 2.5 * day / 3) == 0  # pruned within the day: not again
    assert store.get("cd" * 32) is not None
    assert store.prune(now=now + 2.5 * day) == 1  # days later: the other one is old now
    assert store.get("cd" * 32) is None


def test_the_default_store_follows_the_d3_store_setting(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ist, "_DEFAULT", {})
    monkeypatch.setenv(D3_CACHE_ENV, "off")
    assert ist.default_item_store() is None
    monkeypatch.setenv(D3_CACHE_ENV, str(tmp_path / "d3"))
    store = ist.default_item_store()
    assert store is not None
    assert store.path == tmp_path / "d3" / f"items-{ist.package_fingerprint()[:32]}.sqlite"
    assert ist.default_item_store() is store  # one per setting


def test_the_fingerprint_covers_every_file_of_the_package_but_compiled_caches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub" / "__pycache__").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "data.json").write_text("{}")
    monkeypatch.setattr(ist, "pytest_graphinstruct",
                        SimpleNamespace(__file__=str(pkg / "__init__.py")))
    first = ist.package_fingerprint()
    (pkg / "sub" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert ist.package_fingerprint() == first
    (pkg / "sub" / "data.json").write_text('{"a": 1}')
    assert ist.package_fingerprint() != first


def test_score_reads_back_what_it_scored_and_reports_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ist, "_DEFAULT", {})
    monkeypatch.setenv(D3_CACHE_ENV, str(tmp_path / "d3"))
    suite = write_suite(tmp_path / "suite")
    answers = references_as_answers(suite, tmp_path / "refs.jsonl", k=2)
    run = build_run_config({"replay": str(answers), "suite": str(suite), "pools": "none"},
                           rootdir=tmp_path)
    assert run is not None
    first = score_recorded(run).report.to_json()
    (db,) = (tmp_path / "d3").glob("items-*.sqlite")
    with sqlite3.connect(db) as conn:
        (stored,) = conn.execute("SELECT COUNT(*) FROM items").fetchone()
    scored = [r for c in first["cells"] for r in c["per_instruction"]  # type: ignore[union-attr]
              if r["outcome"] in ("passed", "failed")]  # type: ignore[index]
    assert scored and stored == len(scored)

    monkeypatch.setattr(Verifier, "verify", _no_verification)
    again = score_recorded(run).report.to_json()
    first.pop("run"), again.pop("run")
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_other_answers_are_scored_not_read(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ist, "_DEFAULT", {})
    monkeypatch.setenv(D3_CACHE_ENV, str(tmp_path / "d3"))
    suite = write_suite(tmp_path / "suite")
    runs = []
    for k in (1, 2):
        answers = references_as_answers(suite, tmp_path / f"refs{k}.jsonl", k=k)
        run = build_run_config({"replay": str(answers), "suite": str(suite), "pools": "none"},
                               rootdir=tmp_path)
        assert run is not None
        runs.append(score_recorded(run).report)
    monkeypatch.setenv(D3_CACHE_ENV, "off")
    monkeypatch.setattr(ist, "_DEFAULT", {})
    fresh = score_recorded(run).report  # the second file, nothing stored
    assert [r.to_json() for r in fresh.cells[0].per_instruction] == \
        [r.to_json() for r in runs[1].cells[0].per_instruction]
    assert [len(r.samples) for r in runs[1].cells[0].per_instruction] == \
        [2] * len(runs[1].cells[0].per_instruction)


@pytest.mark.skipif(not sr.can_fork(), reason="parts are forked on Linux only")
def test_parts_store_and_read_back_as_one_process_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(ist, "_DEFAULT", {})
    monkeypatch.setenv(D3_CACHE_ENV, str(tmp_path / "d3"))
    monkeypatch.setattr(sr, "MIN_ITEMS_PER_JOB", 1)  # the tiny suite still splits
    suite = write_suite(tmp_path / "suite")
    answers = references_as_answers(suite, tmp_path / "refs.jsonl", k=2)
    args = ["score", "--suite", str(suite), "--responses", str(answers), "--pools", "none",
            "--jobs", "2"]
    assert main([*args, "--report", str(tmp_path / "first.json")]) == 0
    assert "read from the item store" not in capsys.readouterr().out
    monkeypatch.setattr(Verifier, "verify", _no_verification)  # the forked parts inherit it
    assert main([*args, "--report", str(tmp_path / "again.json")]) == 0
    out = capsys.readouterr().out
    first, again = (json.loads((tmp_path / f"{n}.json").read_text(encoding="utf-8"))
                    for n in ("first", "again"))
    first.pop("run"), again.pop("run")
    assert again == first
    scored = sum(r["outcome"] in ("passed", "failed")
                 for c in first["cells"] for r in c["per_instruction"])
    assert f"{scored} item(s) scored before with the same answers were read" in out


def _no_verification(*args: object, **kwargs: object) -> None:
    raise AssertionError("an item in the store was verified again")
