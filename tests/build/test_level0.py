"""Level 0 builder: sizes, templates, stratification, determinism, verified references."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_graphinstruct.build.common import as_instruction
from pytest_graphinstruct.build.level0 import TEMPLATES, build_level0
from pytest_graphinstruct.verify.verifier import DEFAULT_VERIFIER
from tests.suite.agreement import disagreements


@pytest.fixture(scope="module")
def records() -> list[dict]:
    return build_level0(0, 100)


def test_counts_ids_and_buckets(records: list[dict]) -> None:
    assert [r["id"] for r in records] == [f"L0-{i:03d}" for i in range(1, 101)]
    buckets = Counter(r["graph_sizes"][0] for r in records)
    assert min(buckets[b] for b in ("small", "medium", "large")) >= 15
    assert {r["template"] for r in records} == {t.name for t in TEMPLATES}


def test_every_reference_passes_and_texts_agree(records: list[dict]) -> None:
    for r in records:
        inst = as_instruction(r)
        assert len(r["reference_solutions"]) == 2
        for ref in r["reference_solutions"]:
            assert DEFAULT_VERIFIER.verify(inst, ref).passed, (r["id"], ref[:80])
        assert disagreements(r) == [], r["id"]


def test_deterministic_and_seed_dependent(records: list[dict]) -> None:
    assert build_level0(0, 100, indices={1, 57, 100}) == [records[0], records[56], records[99]]
    other = build_level0(1, 100)
    assert [r["instruction"] for r in other] != [r["instruction"] for r in records]
    assert Counter(r["template"] for r in other) == Counter(r["template"] for r in records)
