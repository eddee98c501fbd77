"""Seeded random streams: the one place the builders (suite and pools) derive randomness.

Every random stream of :mod:`pytest_graphinstruct.build` is keyed by a seed and a *path* of
labels, e.g. ``(0, "L4", 17, "ref")`` or ``(0, 3, "ba_small", 12, 0)``.  Promises:

* **One derivation.**  :func:`stream_seed` joins the seed and the path into a key string,
  hashes it with sha256 and takes the first 16 bytes (big-endian) as the stream's seed;
  :func:`rng_for` (a :class:`random.Random`) and :func:`np_rng_for` (a numpy
  :class:`~numpy.random.Generator`) are seeded with it.  Nothing reads global random state, so
  equal paths give equal streams on every platform (as long as Python's and numpy's generator
  algorithms stay the same).
* **Two key spellings, both fixed.**  A :class:`Scheme` says how a path is spelled as a key.
  The committed files were built with two: :data:`SUITE` (``"0/L4/17/ref"``: the instruction
  suite) and :data:`POOLS` (``"graphinstruct-pools:0:3:ba_small:12:0"``: the reference pools).
  Changing either changes every committed file.
* **Streams from streams.**  :func:`np_rng_from` seeds a numpy generator from a draw of a
  :class:`random.Random` (for numpy-based generators called from the suite builder);
  :func:`nx_seed` draws a seed for a networkx generator from either kind of stream.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scheme:
    """How a seed and a path are spelled as a key: ``namespace`` (if any), the seed and the
    path labels (``str`` of each) joined by ``separator``."""

    separator: str
    namespace: str | None = None

    def key(self, seed: int, path: tuple[object, ...]) -> str:
        head = [] if self.namespace is None else [self.namespace]
        return self.separator.join([*head, str(seed), *map(str, path)])


#: The instruction suite's keys: ``"<seed>/<label>/<label>…"``.
SUITE = Scheme("/")
#: The reference pools' keys: ``"graphinstruct-pools:<seed>:<level>:<subgroup>:<index>:<attempt>"``.
POOLS = Scheme(":", "graphinstruct-pools")


def stream_seed(seed: int, *path: object, scheme: Scheme = SUITE) -> int:
    """The 128-bit seed of stream ``path`` under ``seed``: the first 16 bytes (big-endian) of
    the sha256 of ``scheme``'s key."""
    digest = hashlib.sha256(scheme.key(seed, path).encode()).digest()
    return int.from_bytes(digest[:16], "big")


def rng_for(seed: int, *path: object, scheme: Scheme = SUITE) -> random.Random:
    """A :class:`random.Random` for stream ``path`` (``rng_for(seed, "L2", 17, "ref")``)."""
    return random.Random(stream_seed(seed, *path, scheme=scheme))


def np_rng_for(seed: int, *path: object, scheme: Scheme = SUITE) -> np.random.Generator:
    """A numpy :class:`~numpy.random.Generator` for stream ``path``
    (``np_rng_for(seed, 3, "ba_small", 12, 0, scheme=POOLS)``)."""
    return np.random.default_rng(stream_seed(seed, *path, scheme=scheme))


def np_rng_from(rng: random.Random, bits: int) -> np.random.Generator:
    """A numpy generator seeded with one ``bits``-bit draw of ``rng`` (L3 references draw 63
    bits, L4 references 31)."""
    return np.random.default_rng(rng.randrange(1 << bits))


def nx_seed(rng: random.Random | np.random.Generator) -> int:
    """A seed for a networkx generator, drawn from ``rng``: ``0 ≤ seed < 2³¹`` from a
    :class:`random.Random`, ``0 ≤ seed < 2³¹ − 1`` from a numpy generator (the bound the pools
    were built with)."""
    if isinstance(rng, random.Random):
        return rng.randrange(1 << 31)
    return int(rng.integers(0, 2**31 - 1))
