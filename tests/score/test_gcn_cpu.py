"""The NumPy trainer's helpers (score/gcn_cpu.py); its training is tested through
tests/score/test_gcn.py and against torch in tests/score/test_gcn_torch.py."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.score.gcn_cpu import class_mask


def test_the_class_mask_hides_each_models_padding_columns() -> None:
    mask = class_mask([2, 4, 1], 4)
    inf = -np.inf
    assert mask.dtype == np.float32
    assert mask.tolist() == [[0, 0, inf, inf], [0, 0, 0, 0], [0, inf, inf, inf]]


@given(st.lists(st.integers(1, 9), min_size=1, max_size=12))
def test_a_masked_softmax_gives_padding_no_probability(classes: list[int]) -> None:
    width = max(classes)
    logits = np.zeros((len(classes), width), dtype=np.float32) + class_mask(classes, width)
    prob = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    for row, c in zip(prob, classes, strict=True):
        assert np.allclose(row[:c], 1 / c) and not row[c:].any()
