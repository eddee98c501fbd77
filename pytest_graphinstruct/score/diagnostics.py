"""D1 diagnostics: orbit-count MMD and graph edit distance.  Off by default, never part of D1.

* :func:`orbit_mmd` — per node of the simple undirected view, four orbit counts: degree,
  2-paths centred at the node (``C(d, 2)``), triangles, 3-stars centred at the node
  (``C(d, 3)``).  Each count becomes a histogram over fixed bins of ``log2(1 + count)``
  (:data:`ORBIT_BINS` unit bins, the last one open), compared with the Gaussian-EMD MMD of
  :mod:`~pytest_graphinstruct.kernels.mmd` (σ from the references).  The reference release's
  four-orbit approximation with a fixed RBF σ = 30 is not reproduced.
* :func:`graph_edit_distance` — ``nx.optimize_graph_edit_distance`` (unit costs, attributes
  ignored) run in a **separate interpreter that is killed at the timeout**, so the work really stops
  (the release abandons a thread that keeps burning CPU).  The result is the best distance found
  (an upper bound of the GED; ``exact`` when the search finished) plus the trivial lower bound
  ``|Δn| + |Δm|``.  Timing-dependent: diagnostics are not part of reproducible reports.
* :func:`ged_similarity` — best over references of ``1 − GED / max(|V1|+|E1|, |V2|+|E2|, 1)``
  (clamped at 0), from the best distance found per reference.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import IO, Any

import networkx as nx
import numpy as np

from pytest_graphinstruct.kernels.mmd import FeatureBlock, FeatureMMD, _Arrays, block_mmd

ORBITS: tuple[str, ...] = ("degree", "path2", "triangle", "star3")
ORBIT_BINS = 10
#: Default wall-clock limit of one GED computation (seconds).
GED_TIMEOUT_S = 2.0


# -- orbit counts ---------------------------------------------------------------------------------

def orbit_counts(g: nx.Graph) -> np.ndarray:
    """``n × 4`` int array: degree, centred 2-paths, triangles, centred 3-stars per node (in
    ``g``'s node order) of the simple undirected view (self-loops ignored)."""
    a = _Arrays.of(g)
    adj = a.simple_undirected()
    d = np.asarray(adj.sum(axis=1)).ravel().astype(np.int64)
    tri = (np.asarray((adj @ adj).multiply(adj).sum(axis=1)).ravel() // 2).astype(np.int64)
    return np.stack([d, d * (d - 1) // 2, tri, d * (d - 1) * (d - 2) // 6], axis=1)


def orbit_histograms(g: nx.Graph) -> list[np.ndarray]:
    """One normalised :data:`ORBIT_BINS`-bin histogram of ``log2(1 + count)`` per orbit."""
    counts = orbit_counts(g)
    out = []
    for col in range(len(ORBITS)):
        if len(counts) == 0:
            h = np.zeros(ORBIT_BINS)
            h[0] = 1.0
        else:
            b = np.minimum(np.floor(np.log2(1.0 + counts[:, col])), ORBIT_BINS - 1)
            h = np.bincount(b.astype(np.int64), minlength=ORBIT_BINS) / len(counts)
        out.append(h)
    return out


@dataclass(frozen=True)
class OrbitMMD:
    """Per-orbit MMD and the mean of the orbit scores."""

    orbits: MappingProxyType[str, FeatureMMD]
    mean: float

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: {"mmd": v.mmd, "score": v.score, "sigma": v.sigma}
                               for k, v in self.orbits.items()}
        out["mean"] = self.mean
        return out


def orbit_mmd(generated: Sequence[nx.Graph], references: Sequence[nx.Graph]) -> OrbitMMD:
    """Orbit-count MMD of ``generated`` against ``references`` (σ from the references)."""
    gx = [orbit_histograms(g) for g in generated]
    gy = [orbit_histograms(g) for g in references]
    res = {}
    for i, name in enumerate(ORBITS):
        x = FeatureBlock.from_histograms([h[i] for h in gx]) if gx else _empty()
        y = FeatureBlock.from_histograms([h[i] for h in gy]) if gy else _empty()
        res[name] = block_mmd(x, y)
    return OrbitMMD(MappingProxyType(res), sum(v.score for v in res.values()) / len(res))


def _empty() -> FeatureBlock:
    return FeatureBlock.from_matrix(np.zeros((0, 1)), np.zeros(0, dtype=bool))


# -- graph edit distance --------------------------------------------------------------------------

@dataclass(frozen=True)
class GedResult:
    """Outcome of a bounded GED computation.

    ``distance`` is the best edit distance found (``None`` if none before the timeout);
    ``exact`` says the search finished (then ``distance`` is the GED); ``lower_bound`` is
    ``|Δn| + |Δm|``; ``error`` is set when the worker process failed (not on a timeout).
    """

    distance: float | None
    exact: bool
    lower_bound: int
    seconds: float
    error: str | None = None


def _payload(g: nx.Graph) -> dict[str, Any]:
    index = {v: i for i, v in enumerate(g)}
    return {"directed": g.is_directed(), "n": len(index),
            "edges": [[index[u], index[v]] for u, v in g.edges()]}


def _rebuild(p: Mapping[str, Any]) -> nx.Graph:
    g: nx.Graph = nx.DiGraph() if p["directed"] else nx.Graph()
    g.add_nodes_from(range(p["n"]))
    g.add_edges_from(tuple(e) for e in p["edges"])
    return g


def _child_main() -> None:
    """Worker entry (``python -m pytest_graphinstruct.score.diagnostics``): reads both graphs
    as one JSON line on stdin, prints every improved distance, then ``done``."""
    job = json.loads(sys.stdin.readline())
    for value in nx.optimize_graph_edit_distance(_rebuild(job["a"]), _rebuild(job["b"])):
        print(float(value), flush=True)
    print("done", flush=True)


def graph_edit_distance(g: nx.Graph, h: nx.Graph, *,
                        timeout_s: float = GED_TIMEOUT_S) -> GedResult:
    """GED of ``g`` and ``h``, computed in a child interpreter that is killed at
    ``timeout_s`` seconds after it started (so the search really stops)."""
    lower = abs(g.number_of_nodes() - h.number_of_nodes()) + abs(
        g.number_of_edges() - h.number_of_edges())
    start = time.monotonic()
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])  # this package importable in the child
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_graphinstruct.score.diagnostics"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=env)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()

    def pump(stream: IO[str]) -> None:  # ends when the pipe closes (exit or kill)
        for line in stream:
            lines.put(line.strip())
        lines.put(None)

    reader = threading.Thread(target=pump, args=(proc.stdout,), daemon=True)
    reader.start()
    best: float | None = None
    exact = False
    error: str | None = None
    deadline = start + timeout_s
    try:
        proc.stdin.write(json.dumps({"a": _payload(g), "b": _payload(h)}) + "\n")
        proc.stdin.close()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:  # the worker exited without saying done
                proc.wait()
                error = f"GED worker exited with status {proc.returncode}: " + (
                    proc.stderr.read().strip().splitlines() or ["no message"])[-1]
                break
            if line == "done":
                exact = True
                break
            value = float(line)
            best = value if best is None else min(best, value)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
    return GedResult(best, exact, lower, time.monotonic() - start, error)


def ged_similarity(g: nx.Graph, references: Sequence[nx.Graph], *,
                   timeout_s: float = GED_TIMEOUT_S) -> tuple[float | None, bool]:
    """``(similarity, exact)``: best over references of ``1 − d / max(|V|+|E| of either, 1)``
    from the best distance found per reference; ``None`` when no distance was found."""
    best: float | None = None
    exact = True
    for r in references:
        res = graph_edit_distance(g, r, timeout_s=timeout_s)
        exact = exact and res.exact
        if res.distance is None:
            continue
        norm = max(g.number_of_nodes() + g.number_of_edges(),
                   r.number_of_nodes() + r.number_of_edges(), 1)
        sim = max(0.0, 1.0 - res.distance / norm)
        best = sim if best is None else max(best, sim)
    return best, exact


if __name__ == "__main__":
    _child_main()
