"""The seeded-stream family (build/streams.py): one derivation, both key spellings."""

from __future__ import annotations

import hashlib
import random

import numpy as np

from pytest_graphinstruct.build.streams import (
    POOLS,
    SUITE,
    np_rng_for,
    np_rng_from,
    nx_seed,
    rng_for,
    stream_seed,
)


def test_rng_for_is_a_pure_function_of_its_path() -> None:
    assert rng_for(0, "L1", 3).random() == rng_for(0, "L1", 3).random()
    assert rng_for(0, "L1", 3).random() != rng_for(0, "L1", 4).random()
    assert rng_for(0, "L1", 3).random() != rng_for(1, "L1", 3).random()


def test_the_two_key_spellings_are_the_committed_ones() -> None:
    assert SUITE.key(0, ("L4", 3, "ref")) == "0/L4/3/ref"
    assert POOLS.key(0, (3, "ba_small", 5, 0)) == "graphinstruct-pools:0:3:ba_small:5:0"
    # pinned: changing the derivation changes every committed instruction and pool graph
    assert stream_seed(0, "L4", 3, "ref") == 301689032657122033742596318370369695229
    assert (stream_seed(0, 3, "ba_small", 5, 0, scheme=POOLS)
            == 213791052496498752653413756310494326502)


def test_stream_seed_is_the_sha256_prefix_of_the_key() -> None:
    digest = hashlib.sha256(b"graphinstruct-pools:7:4:social/holme_kim:2:1").digest()
    expected = int.from_bytes(digest[:16], "big")
    assert stream_seed(7, 4, "social/holme_kim", 2, 1, scheme=POOLS) == expected
    assert (np_rng_for(7, 4, "social/holme_kim", 2, 1, scheme=POOLS).random()
            == np.random.default_rng(expected).random())
    assert rng_for(7, "L2", 1).random() == random.Random(stream_seed(7, "L2", 1)).random()


def test_numpy_stream_from_a_python_stream_takes_one_draw() -> None:
    a, b = random.Random(5), random.Random(5)
    got = np_rng_from(a, bits=31).random()
    assert got == np.random.default_rng(b.randrange(1 << 31)).random()
    assert a.random() == b.random()  # both streams moved by exactly one draw


def test_nx_seed_on_both_kinds() -> None:
    assert nx_seed(random.Random(1)) == random.Random(1).randrange(1 << 31)
    assert nx_seed(np.random.default_rng(1)) == int(
        np.random.default_rng(1).integers(0, 2**31 - 1))
    assert all(0 <= nx_seed(np.random.default_rng(i)) < 2**31 - 1 for i in range(50))
