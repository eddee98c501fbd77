"""``export-cache``: one cell's answers in the raw-generation format — the newest answer of each
sample when the cache holds several, a warning when the cell's answers came from several
endpoints, and messages that name the command's flags (``--cell``), never Python arguments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.__main__ import main
from pytest_graphinstruct.answers import Answer, Message, Usage
from pytest_graphinstruct.models.base import Request
from pytest_graphinstruct.models.caching.cache import AnswerCache


def put(cache: AnswerCache, text: str, *, prompt: str = "tree please", cell: str = "m-zero-shot",
        iid: str = "L1-001", sample: int = 0, endpoint: str = "http://a") -> None:
    req = Request(model="m", messages=(Message("user", prompt),), instruction_id=iid,
                  cell=cell, sample_index=sample)
    assert cache.put(req.cache_key(endpoint), req,
                     Answer(text=text, usage=Usage(7, 9), finish_reason="stop"),
                     endpoint=endpoint)


def export(capsys: pytest.CaptureFixture[str], cache: Path, out: Path,
           *extra: str) -> tuple[int, str, str]:
    status = main(["cache", "export", "--cache", str(cache), "--out", str(out), *extra])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def records(path: Path) -> dict[str, list[str]]:
    return {r["instruction_id"]: [s["raw_output"] for s in r["samples"]]
            for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_the_newest_answer_of_a_sample_is_exported(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "old answer", prompt="v1 prompt")
    put(cache, "other sample", sample=1)
    put(cache, "new answer", prompt="v2 prompt")  # the prompt changed: a new key, same sample
    out = tmp_path / "raw.jsonl"
    status, stdout, err = export(capsys, tmp_path / "cache", out)
    assert status == 0 and err == "", err
    assert records(out) == {"L1-001": ["new answer", "other sample"]}
    assert "exported 1 instruction(s)" in stdout
    assert "1 older answer(s) of the same sample left out" in stdout


def test_answers_from_several_endpoints_are_warned_about(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "a0", endpoint="http://a")
    put(cache, "b1", sample=1, endpoint="http://b")
    put(cache, "other cell", cell="n-zero-shot", endpoint="http://c")
    out = tmp_path / "raw.jsonl"
    status, _, err = export(capsys, tmp_path / "cache", out, "--cell", "m-zero-shot")
    assert status == 0
    (line,) = err.splitlines()
    assert line.startswith("warning: ") and "m-zero-shot" in line
    assert "http://a" in line and "http://b" in line and "http://c" not in line
    assert records(out) == {"L1-001": ["a0", "b1"]}


def test_several_cells_need_the_cell_flag(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "m answer")
    put(cache, "n answer", cell="n-zero-shot", prompt="n's prompt")
    out = tmp_path / "raw.jsonl"
    status, stdout, err = export(capsys, tmp_path / "cache", out)
    assert status == 2 and stdout == "" and not out.exists()
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "--cell" in line and "cell=" not in line
    assert "m-zero-shot" in line and "n-zero-shot" in line
    status, _, err = export(capsys, tmp_path / "cache", out, "--cell", "x-few-shot")
    assert status == 2 and not out.exists()
    (line,) = err.splitlines()
    assert "x-few-shot" in line and "--cell" in line and "m-zero-shot" in line
    assert export(capsys, tmp_path / "cache", out, "--cell", "n-zero-shot")[0] == 0
    assert records(out) == {"L1-001": ["n answer"]}


def test_damaged_lines_are_one_warning_line(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "kept")
    with open(cache.path, "a", encoding="utf-8") as fh:
        fh.write("garbage{\n{\"key\": 1}\n")
    out = tmp_path / "raw.jsonl"
    status, _, err = export(capsys, tmp_path / "cache", out)
    assert status == 0 and records(out) == {"L1-001": ["kept"]}
    (line,) = err.splitlines()
    assert line.startswith("warning: ") and "2 damaged line(s)" in line


def test_a_cache_of_garbage_is_one_error_line(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "answers.jsonl").write_text("garbage{\n", encoding="utf-8")
    status, _, err = export(capsys, tmp_path / "cache", tmp_path / "raw.jsonl")
    assert status == 2
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "answers.jsonl" in line


def test_the_export_is_the_raw_generation_format_in_sample_order(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_graphinstruct.models.backends.recorded import read_responses

    cache = AnswerCache(tmp_path / "cache")
    for iid in ("L0-002", "L4-010"):
        for k in (2, 0, 1):  # out of order on purpose
            req = Request(model="m", messages=(Message("user", f"{iid}-{k}"),),
                          instruction_id=iid, cell="m-zero-shot", sample_index=k)
            usage = Usage(100 + k, 10 + k) if k != 1 else None
            cache.put(req.cache_key("ep"), req,
                      Answer(text=f"{iid} sample {k}", usage=usage, calls=k + 1))
    out = tmp_path / "raw.jsonl"
    status, _, err = export(capsys, tmp_path / "cache", out)
    assert status == 0, err
    responses = read_responses(out)
    assert responses.skipped == ()
    rec = responses.get("L4-010")
    assert rec is not None and rec.level == 4
    assert [s.raw_output for s in rec.samples] == [f"L4-010 sample {k}" for k in range(3)]
    assert [(s.input_tokens, s.output_tokens, s.api_calls) for s in rec.samples] == [
        (100, 10, 1), (None, None, 2), (102, 12, 3)]
    first = responses.get("L0-002")
    assert first is not None and first.level == 0


@pytest.mark.parametrize("label", ["m-zero-shot-vgig", "gpt-4o-few-cot-vgig-fine@T2",
                                   "m-zero-shot-retry", "m-zero-shot-sc@T5",
                                   "m-zero-shot-combined"])
def test_an_iterative_method_cell_is_refused(tmp_path: Path, label: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "round 0", cell=label)
    put(cache, "round 1", cell=label, sample=1)
    status, _, err = export(capsys, tmp_path / "cache", tmp_path / "raw.jsonl")
    assert status == 2
    assert f"cell {label} is an iterative method" in err and "Traceback" not in err
    assert not (tmp_path / "raw.jsonl").exists()


@pytest.mark.parametrize("label", ["m-zero-shot", "m-few-cot-caap", "sc-zero-shot",
                                   "m-zero-shot-constrained", "vgig-few-shot"])
def test_one_call_per_sample_cells_are_exported(tmp_path: Path, label: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    cache = AnswerCache(tmp_path / "cache")
    put(cache, "an answer", cell=label)
    status, _, err = export(capsys, tmp_path / "cache", tmp_path / "raw.jsonl")
    assert status == 0, err
