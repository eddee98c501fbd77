"""score.gcn_store: D3's GCN results kept between runs — read back bit for bit, the same D3 as
computing them, one file per fingerprint, damaged lines skipped, off when asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.score import d3, gcn, gcn_store
from pytest_graphinstruct.score.d3 import graph_sets_d3
from pytest_graphinstruct.score.gcn_store import GcnStore, default_store, result_key
from tests.score._d3graphs import REFERENCES, sbm


def test_values_round_trip_bit_for_bit_through_a_new_store(tmp_path: Path) -> None:
    values = {result_key("A", b"cert", 1): 0.1 + 0.2, result_key("B", b"x", b"y"): 1 / 3}
    GcnStore(tmp_path, "f" * 64).put(values)
    again = GcnStore(tmp_path, "f" * 64)
    assert {k: again.get(k) for k in values} == values
    assert GcnStore(tmp_path, "e" * 64).get(next(iter(values))) is None  # another fingerprint


def test_damaged_lines_are_skipped_and_the_rest_read(tmp_path: Path) -> None:
    store = GcnStore(tmp_path, "a" * 64)
    store.put({"k1": 0.5})
    with store.path.open("a", encoding="utf-8") as fh:
        fh.write('{"k": "k2", "v": "not a float"}\nnot json\n{"k": "k3"')
    again = GcnStore(tmp_path, "a" * 64)
    assert again.get("k1") == 0.5 and again.get("k2") is None and again.get("k3") is None


def test_a_store_that_cannot_be_written_is_simply_not_used(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    store = GcnStore(blocker / "d3", "a" * 64)
    store.put({"k": 1.0})  # no error: the value is computed again next time
    assert GcnStore(blocker / "d3", "a" * 64).get("k") is None


def test_keys_tell_their_parts_apart() -> None:
    assert result_key("A", b"ab", b"c") != result_key("A", b"a", b"bc")
    assert result_key("A", b"x") != result_key("B", b"x")
    assert result_key("A", b"x", gcn.GcnConfig()) != result_key("A", b"x", gcn.GcnConfig(epochs=99))


def test_the_fingerprint_follows_the_code_and_the_kernel_choice(
        monkeypatch: pytest.MonkeyPatch) -> None:
    modules = (gcn, d3)
    base = gcn_store.fingerprint(modules)
    assert gcn_store.fingerprint(modules) == base
    assert gcn_store.fingerprint((gcn,)) != base
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "avx2")
    assert gcn_store.fingerprint(modules) != base


def test_off_means_no_store_and_a_folder_names_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gcn_store.ENV, "off")
    assert default_store((gcn,)) is None
    monkeypatch.setenv(gcn_store.ENV, str(tmp_path))
    store = default_store((gcn,))
    assert store is not None and store.path.parent == tmp_path
    monkeypatch.setenv(gcn_store.REFERENCE_ENV, "off")
    assert gcn_store.reference_store((gcn,)) is None
    monkeypatch.setenv(gcn_store.REFERENCE_ENV, str(tmp_path / "refs"))
    refs = gcn_store.reference_store((gcn,))
    assert refs is not None and refs.path.parent == tmp_path / "refs"


def test_d3_read_from_the_store_equals_d3_computed_and_trains_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sets = [([sbm([5, 6, 7], s), sbm([6, 6, 6], s + 9)], REFERENCES) for s in range(3)]
    d3.clear_caches()
    computed = graph_sets_d3(sets)  # the store is off (tests/conftest.py)
    monkeypatch.setenv(gcn_store.ENV, str(tmp_path))
    d3.clear_caches()
    assert graph_sets_d3(sets) == computed  # computed again, and stored
    lines = [json.loads(x) for x in next(tmp_path.glob("gcn-*.jsonl")).read_text().splitlines()]
    assert lines and all(set(x) == {"k", "v"} for x in lines)

    def no_training(*_a: object, **_k: object) -> gcn.GcnRun:
        raise AssertionError("a stored result was trained again")

    monkeypatch.setattr(gcn, "soft_accuracies", no_training)
    monkeypatch.setattr(gcn_store, "_DEFAULT", {})  # a new process: nothing in memory
    d3.clear_caches()
    assert graph_sets_d3(sets) == computed  # read, bit for bit


def test_only_cpu_results_are_stored_or_read(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(gcn_store.ENV, str(tmp_path))
    monkeypatch.setattr(gcn_store, "_DEFAULT", {})
    monkeypatch.setenv(gcn_store.REFERENCE_ENV, str(tmp_path / "refs"))
    assert None not in d3._stores(d3.D3Config())
    assert d3._stores(d3.D3Config(gcn_config=gcn.GcnConfig(device="cuda"))) == (None, None)


def test_the_reference_side_is_stored_apart_and_read_with_the_result_store_off(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sets = [([sbm([5, 6, 7], s), sbm([6, 6, 6], s + 9)], REFERENCES) for s in range(3)]
    d3.clear_caches()
    computed = graph_sets_d3(sets)  # both stores off (tests/conftest.py)
    monkeypatch.setenv(gcn_store.REFERENCE_ENV, str(tmp_path))
    monkeypatch.setattr(gcn_store, "_DEFAULT", {})
    d3.clear_caches()
    assert graph_sets_d3(sets) == computed  # computed again; experiment A stored
    stored = next(tmp_path.glob("gcn-*.jsonl")).read_text().splitlines()
    assert len(stored) == len(REFERENCES)  # one A per reference, no B (the result store is off)
    trained: list[str] = []
    real = gcn.soft_accuracies

    def counting(tasks: list[gcn.GcnTask], config: gcn.GcnConfig) -> gcn.GcnRun:
        trained.extend(str(t.train_key[0]) for t in tasks if isinstance(t.train_key, tuple))
        return real(tasks, config)

    monkeypatch.setattr(gcn, "soft_accuracies", counting)
    monkeypatch.setattr(gcn_store, "_DEFAULT", {})  # a new process: nothing in memory
    d3.clear_caches()
    assert graph_sets_d3(sets) == computed  # A read bit for bit, B trained
    assert trained and set(trained) == {"B"}


def test_no_home_folder_means_no_store_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(gcn_store.ENV, raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(gcn_store, "_DEFAULT", {})

    def no_home() -> Path:
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    assert default_store((gcn,)) is None
