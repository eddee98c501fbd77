"""run.requests: one request per sample of an item, the same every time it is built."""

from __future__ import annotations

from pathlib import Path

from pytest_graphinstruct.run.config import build_run_config
from pytest_graphinstruct.run.requests import RequestBuilder
from pytest_graphinstruct.run.session_inputs import SessionInputs
from tests.plugin._suite import write_suite


def _builder(tmp_path: Path, **extra: str) -> RequestBuilder:
    root = write_suite(tmp_path / "suite")
    run = build_run_config({"model": "oracle", "suite": str(root), "no_cache": True,
                            "pools": "none", **extra}, rootdir=tmp_path)
    assert run is not None
    return RequestBuilder(SessionInputs(run, worker=None, inputs=None, served=None))


def test_a_request_is_deterministic_and_names_its_item(tmp_path: Path) -> None:
    builder = _builder(tmp_path)
    cell = builder.inputs.config.cells[0]
    inst = builder.inputs.suite["L1-001"]
    first, again = builder.request(inst, cell, 1), builder.request(inst, cell, 1)
    assert first == again
    assert (first.model, first.instruction_id, first.cell, first.sample_index) == \
        ("oracle", "L1-001", cell.label, 1)
    assert inst.text in first.messages[-1].content


def test_a_few_shot_request_shows_exemplars_before_the_instruction(tmp_path: Path) -> None:
    builder = _builder(tmp_path, strategy="zero-shot,few-shot")
    zero, few = builder.inputs.config.cells
    inst = builder.inputs.suite["L1-001"]
    plain, shown = builder.request(inst, zero, 0), builder.request(inst, few, 0)
    assert len("".join(m.content for m in shown.messages)) > \
        len("".join(m.content for m in plain.messages))


def test_an_items_samples_differ_only_in_their_index_and_equal_a_fresh_build(
        tmp_path: Path) -> None:
    builder = _builder(tmp_path, strategy="zero-shot,few-shot")
    zero, few = builder.inputs.config.cells
    suite = builder.inputs.suite
    asked = [(suite[i], cell, k) for i in ("L1-001", "L2-001") for cell in (zero, few)
             for k in range(3)]
    for inst, cell, k in asked:  # each built from the last one's (the same item) or anew
        fresh = _builder(tmp_path / f"{inst.id}-{cell.label}-{k}",
                         strategy="zero-shot,few-shot")
        expected = fresh.request(fresh.inputs.suite[inst.id],
                                 fresh.inputs.config.cells[cell is few], k)
        assert builder.request(inst, cell, k) == expected
