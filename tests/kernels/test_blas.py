"""kernels.blas: numpy's OpenBLAS on one thread inside the block, restored afterwards."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from pytest_graphinstruct.kernels import blas


def test_blas_single_thread_is_restored() -> None:
    before = blas.blas_threads()
    with blas.single_blas_thread():
        if before is not None:
            assert blas.blas_threads() == 1
        with blas.single_blas_thread():
            pass
    assert blas.blas_threads() == before



def _needs_openblas() -> int:
    threads = blas.blas_threads()
    if threads is None:
        pytest.skip("numpy's OpenBLAS was not found")
    return threads


def test_the_setting_is_restored_after_an_error() -> None:
    before = _needs_openblas()
    with pytest.raises(ValueError), blas.single_blas_thread():
        raise ValueError("boom")
    assert blas.blas_threads() == before


def test_a_setting_other_than_one_comes_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """Even on a one-core machine the saved count, not 1, is what the block restores."""
    before = _needs_openblas()
    api = blas._api
    assert isinstance(api, tuple)
    setter = api[0]
    setter(2)
    try:
        with blas.single_blas_thread():
            assert blas.blas_threads() == 1
            assert np.linalg.eigvalsh(np.eye(3)).tolist() == [1.0, 1.0, 1.0]
        assert blas.blas_threads() == 2
    finally:
        setter(before)


def test_overlapping_blocks_in_threads_restore_once_the_last_ends() -> None:
    before = _needs_openblas()
    inside, leave = threading.Event(), threading.Event()

    def other() -> None:
        with blas.single_blas_thread():
            inside.set()
            leave.wait()

    t = threading.Thread(target=other)
    t.start()
    inside.wait()
    with blas.single_blas_thread():
        pass
    assert blas.blas_threads() == 1  # the other thread's block still holds the setting
    leave.set()
    t.join()
    assert blas.blas_threads() == before


def test_without_openblas_the_block_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas, "_api", None)
    assert blas.blas_threads() is None
    with blas.single_blas_thread():
        assert blas.blas_threads() is None
