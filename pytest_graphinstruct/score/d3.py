"""D3 embedding quality (active at L3–L5), invariant to node ids and node order.

Per valid sample ``g`` and reference ``r`` (all computed on the canonical forms of the undirected
simple views, see :mod:`pytest_graphinstruct.score.canon` and
:mod:`pytest_graphinstruct.score.embedding`)::

    D3(g, r) = 0.50·Grassmann(g, r) + 0.15·GCN(g, r) + 0.35·1/(1 + MMD(g, r))

* **Grassmann coherence** — cosine of the two graphs' compressed low-frequency projectors in the
  shared descriptor frame (:func:`~pytest_graphinstruct.score.embedding.grassmann_coherence`).
* **Embedding MMD** — MMD (RBF, fixed σ = 0.1, biased V-statistic) between the heat-kernel
  signatures of the nodes of ``g`` and of ``r``; the score is ``1/(1 + MMD)``.
* **Node-classification gap** — labels are ``r``'s greedy-modularity communities (label 0 =
  largest).  Experiment A trains a tiny GCN on 80 % of ``r``'s nodes (split by a fixed-seed
  permutation of the canonical positions) and measures its soft accuracy on the other 20 %.
  Experiment B trains the same GCN on *all* of ``g``'s nodes, labelled with ``g``'s own
  greedy-modularity communities matched to ``r``'s classes by size rank (``g``'s i-th largest
  community → class ``min(i, C − 1)``), and measures it on the same 20 % of ``r``.
  ``GCN = max(0, 1 − |A − B|)``.  It applies when ``r`` has ≥ 10 nodes and ≥ 2 communities
  (:mod:`pytest_graphinstruct.score.gcn`: NumPy on the CPU, torch on a GPU).

The sample's D3 is the one against its *closest* reference (the highest combined value; ties → the
first); the instruction's D3 is the mean over its valid samples (0 when none is valid).

Absences are explicit.  A part that does not *apply* (GCN against a small reference) is left out
and the weights of the others are renormalized — that is the definition, ``value`` is set.  A part
that applies but *cannot run* (GCN disabled by the caller, an answer too large) leaves ``value`` at
``None``; ``renormalized`` then holds the combination of the parts present and ``unavailable``
says why — the caller decides.

A sample with more than ``gcn_max_edges`` edges (:data:`GCN_MAX_EDGES`) gets no GCN part where it
applies: ``unavailable["gcn"]`` says ``not computed: answer too large (N edges > limit)`` and the
value is ``None`` (D3 absent, never a weaker value), so one huge answer costs seconds, not a minute.

Degenerate samples (fewer than 2 nodes, no edge, or more than ``max_nodes`` nodes) score 0 on
every part, with a note.  References like that are not used; when no reference is usable the
result is ``None`` with a reason.
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean
from types import MappingProxyType

import networkx as nx
import numpy as np

from pytest_graphinstruct.kernels.blas import single_blas_thread
from pytest_graphinstruct.score import gcn as gcn_mod
from pytest_graphinstruct.score.d4 import is_valid
from pytest_graphinstruct.score.embedding import (
    MMD_SIGMA,
    SpectralFeatures,
    embedding_mmd,
    grassmann_coherence,
    spectral_features,
)
from pytest_graphinstruct.score.gcn_device import resolve_device
from pytest_graphinstruct.score.gcn_store import (
    GcnStore,
    default_store,
    reference_store,
    result_key,
)
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.verify.verdict import Verification

WEIGHTS: Mapping[str, float] = MappingProxyType({"grassmann": 0.50, "gcn": 0.15, "mmd": 0.35})
MIN_GCN_NODES = 10
TRAIN_SHARE = 0.8
SPLIT_SEED = 42
MAX_NODES = 2000
#: Above this many edges a sample's GCN part is not computed (its training costs ~0.2 ms per
#: edge × 100 epochs: ~35 s for a 190k-edge answer); references have at most ~800 edges.
GCN_MAX_EDGES = 20_000
ACTIVE_LEVELS = (3, 4, 5)

_EMPTY: Mapping[str, str] = MappingProxyType({})


@dataclass(frozen=True)
class D3Config:
    """Knobs of D3 (the defaults define the benchmark's D3)."""

    mmd_sigma: float = MMD_SIGMA
    gcn: bool = True
    gcn_config: gcn_mod.GcnConfig = field(default_factory=gcn_mod.GcnConfig)
    max_nodes: int = MAX_NODES
    gcn_max_edges: int = GCN_MAX_EDGES


@dataclass(frozen=True)
class D3Sample:
    """D3 of one valid sample against its closest reference.

    ``value`` is ``None`` exactly when a part that applies could not be computed
    (``unavailable`` says why); ``renormalized`` is always the weighted mean of the parts
    present.  ``exact`` is true when both canonical forms are proven canonical (then the result
    is guaranteed independent of node ids and order).
    """

    value: float | None
    renormalized: float
    grassmann: float
    mmd: float
    mmd_distance: float
    gcn: float | None
    reference: int
    exact: bool = True
    not_applicable: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    unavailable: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    note: str | None = None


@dataclass(frozen=True)
class D3Result:
    """D3 of one instruction: means over the valid samples.

    ``value``: the instruction's D3, ``None`` when no reference is usable or a part that applies
    could not run (see ``reason``/``unavailable``); 0.0 when no sample is valid.
    ``renormalized``: the mean of the samples' ``renormalized`` (``None`` when no reference is
    usable).  ``grassmann``/``mmd``/``gcn``: the parts' means over the samples that have them.
    """

    value: float | None
    renormalized: float | None
    grassmann: float | None = None
    mmd: float | None = None
    gcn: float | None = None
    samples: tuple[D3Sample, ...] = ()
    n_valid: int = 0
    reason: str | None = None
    unavailable: Mapping[str, str] = field(default_factory=lambda: _EMPTY)


# -- public API ----------------------------------------------------------------------------------

def graphs_d3(generated: Sequence[nx.Graph], references: Sequence[nx.Graph],
              config: D3Config = D3Config()) -> D3Result:
    """D3 of the valid samples ``generated`` (graphs) against ``references``."""
    return _score_sets([(list(generated), list(references))], config)[0]


def graph_sets_d3(sets: Sequence[tuple[Sequence[nx.Graph], Sequence[nx.Graph]]],
                  config: D3Config = D3Config()) -> list[D3Result]:
    """:func:`graphs_d3` of many ``(generated, references)`` sets at once (GCNs batched)."""
    return _score_sets([(list(g), list(r)) for g, r in sets], config)


def instruction_d3(instruction: Instruction, samples: Sequence[Verification],
                   config: D3Config = D3Config()) -> D3Result:
    """D3 of one instruction from its samples' verifications (see :func:`instructions_d3`)."""
    return instructions_d3([(instruction, samples)], config)[0]


def instructions_d3(items: Sequence[tuple[Instruction, Sequence[Verification]]],
                    config: D3Config = D3Config()) -> list[D3Result]:
    """D3 of many instructions at once (all GCNs train in one batch — use this for speed).

    Each item is ``(Instruction, [Verification, ...])``; only valid samples (parsed and passing
    the explicit ``graph_type``) are scored.  Instructions below L3, infeasible ones and those
    without references get ``value=None`` with a reason.
    """
    results: list[D3Result | None] = []
    sets: list[tuple[list[nx.Graph], list[nx.Graph]]] = []
    where: list[int] = []
    for instruction, samples in items:
        level = instruction.level
        if level not in ACTIVE_LEVELS:
            results.append(D3Result(None, None, reason=f"D3 is not active at L{level}"))
            continue
        if not instruction.feasible:
            results.append(D3Result(None, None, reason="infeasible instruction"))
            continue
        refs = [r.graph for r in instruction.reference_graphs]
        graphs = [s.parse.graph.graph for s in samples if is_valid(s) and s.parse.graph]
        results.append(None)
        where.append(len(results) - 1)
        sets.append((graphs, refs))
    for i, res in zip(where, _score_sets(sets, config), strict=True):
        results[i] = res
    return [r for r in results if r is not None]


def clear_caches(*, experiments: bool = True) -> None:
    """Forget cached features and (unless ``experiments=False``) experiment-A results."""
    _FEATURES.clear()
    if experiments:
        _EXPERIMENT_A.clear()


# -- features, cached by content ------------------------------------------------------------------

_FEATURES: OrderedDict[Hashable, SpectralFeatures] = OrderedDict()
_FEATURES_MAX = 8192
_EXPERIMENT_A: dict[tuple[bytes, gcn_mod.GcnConfig], float] = {}


def _stores(config: D3Config) -> tuple[GcnStore | None, GcnStore | None]:
    """The process's GCN result store and its reference-side store (:mod:`.gcn_store`), for
    CPU training only."""
    if config.gcn_config.device != "cpu":
        return None, None
    from pytest_graphinstruct.kernels import blas
    from pytest_graphinstruct.score import canon, embedding, gcn_cpu

    modules = (gcn_mod, gcn_cpu, sys.modules[__name__], embedding, canon, blas)
    return default_store(modules), reference_store(modules)


def _content_key(g: nx.Graph) -> Hashable:
    edges = frozenset(frozenset((u, v)) for u, v in g.edges() if u != v)
    return frozenset(g.nodes()), edges


def _features(g: nx.Graph) -> SpectralFeatures:
    key = _content_key(g)
    hit = _FEATURES.get(key)
    if hit is not None:
        _FEATURES.move_to_end(key)
        return hit
    feats = spectral_features(g)
    _FEATURES[key] = feats
    if len(_FEATURES) > _FEATURES_MAX:
        _FEATURES.popitem(last=False)
    return feats


def _degenerate(n: int, m: int, max_nodes: int) -> str | None:
    if n < 2:
        return f"{n} node(s)"
    if m == 0:
        return "no edges"
    if n > max_nodes:
        return f"{n} nodes > max_nodes={max_nodes}"
    return None


@dataclass
class _Ref:
    index: int
    feats: SpectralFeatures
    gcn_reason: str | None = None  # why GCN does not apply
    labels: np.ndarray | None = None
    test: np.ndarray | None = None
    train: np.ndarray | None = None

    @property
    def num_classes(self) -> int:
        assert self.labels is not None
        return int(self.labels.max()) + 1


def _prepare_ref(index: int, feats: SpectralFeatures) -> _Ref:
    ref = _Ref(index, feats)
    if feats.n < MIN_GCN_NODES:
        ref.gcn_reason = f"not applicable: reference has {feats.n} nodes (< {MIN_GCN_NODES})"
        return ref
    labels = feats.communities
    if int(labels.max()) + 1 < 2:
        ref.gcn_reason = "not applicable: reference has a single community"
        return ref
    perm = np.random.default_rng(SPLIT_SEED).permutation(feats.n)
    cut = int(TRAIN_SHARE * feats.n)
    ref.labels, ref.train, ref.test = labels, np.sort(perm[:cut]), np.sort(perm[cut:])
    return ref


def _gcn_graph(feats: SpectralFeatures) -> gcn_mod.GcnGraph:
    return gcn_mod.gcn_graph(feats.canonical.adjacency, feats.node_features)


# -- scoring --------------------------------------------------------------------------------------

@dataclass
class _Pair:
    grassmann: float
    mmd_distance: float
    a_key: tuple[bytes, gcn_mod.GcnConfig] | None = None
    b_task: int | None = None
    b_value: float | None = None  # experiment B read from the store (no task)


def _score_sets(sets: Sequence[tuple[list[nx.Graph], list[nx.Graph]]],
                config: D3Config) -> list[D3Result]:
    with single_blas_thread():
        return _score_sets_inner(sets, config)


def _score_sets_inner(sets: Sequence[tuple[list[nx.Graph], list[nx.Graph]]],
                      config: D3Config) -> list[D3Result]:
    gcn_unavailable: str | None = None
    if not config.gcn:
        gcn_unavailable = "GCN part disabled by the caller"
    elif config.gcn_config.device == "auto":  # decided once: a GPU's values are not stored
        config = replace(config, gcn_config=replace(
            config.gcn_config, device=resolve_device("auto")))
    store, ref_store = _stores(config) if gcn_unavailable is None else (None, None)
    a_store = ref_store or store  # experiment A is the reference side's
    stored_b: dict[tuple[bytes, bytes], float] = {}

    tasks: list[gcn_mod.GcnTask] = []
    task_index: dict[tuple[bytes, bytes], int] = {}
    a_tasks: dict[tuple[bytes, gcn_mod.GcnConfig], int] = {}
    prepared: list[tuple[list[_Ref], list[tuple[SpectralFeatures | None, str | None]],
                         dict[tuple[int, int], _Pair], dict[int, str]] | str] = []

    for generated, references in sets:
        refs: list[_Ref] = []
        for i, r in enumerate(references):
            bad = _degenerate(r.number_of_nodes(), r.number_of_edges(), config.max_nodes)
            if bad is None:
                refs.append(_prepare_ref(i, _features(r)))
        if not refs:
            prepared.append("no usable reference (each has < 2 nodes, no edges or is too large)"
                            if references else "no reference")
            continue
        gens: list[tuple[SpectralFeatures | None, str | None]] = []
        too_large: dict[int, str] = {}
        pairs: dict[tuple[int, int], _Pair] = {}
        for gi, g in enumerate(generated):
            bad = _degenerate(g.number_of_nodes(), g.number_of_edges(), config.max_nodes)
            if bad is not None:
                gens.append((None, f"degenerate sample ({bad}): every part scores 0"))
                continue
            gf = _features(g)
            gens.append((gf, None))
            if g.number_of_edges() > config.gcn_max_edges:
                too_large[gi] = (f"not computed: answer too large ({g.number_of_edges()} edges > "
                                 f"{config.gcn_max_edges})")
            for ref in refs:
                pair = _Pair(grassmann_coherence(gf, ref.feats),
                             embedding_mmd(gf, ref.feats, config.mmd_sigma))
                pairs[(gi, ref.index)] = pair
                if (ref.gcn_reason is not None or gcn_unavailable is not None
                        or gi in too_large):
                    continue
                assert ref.labels is not None and ref.test is not None and ref.train is not None
                rcert = ref.feats.canonical.certificate
                akey = (rcert, config.gcn_config)
                pair.a_key = akey
                if akey not in _EXPERIMENT_A and a_store is not None:
                    known = a_store.get(result_key("A", rcert, config.gcn_config))
                    if known is not None:
                        _EXPERIMENT_A[akey] = known
                if akey not in _EXPERIMENT_A and akey not in a_tasks:
                    rg = _gcn_graph(ref.feats)
                    a_tasks[akey] = len(tasks)
                    tasks.append(gcn_mod.GcnTask(rg, ref.labels, ref.train, rg, ref.labels,
                                                 ref.test, ref.num_classes, ("A", rcert)))
                bkey = (gf.canonical.certificate, rcert)
                if bkey not in task_index and bkey not in stored_b and store is not None:
                    known = store.get(result_key("B", *bkey, config.gcn_config))
                    if known is not None:
                        stored_b[bkey] = known
                if bkey in stored_b:
                    pair.b_value = stored_b[bkey]
                    continue
                if bkey not in task_index:
                    labels = np.minimum(gf.communities, ref.num_classes - 1)
                    task_index[bkey] = len(tasks)
                    # B's training depends on g and the class count only: shared across refs
                    tasks.append(gcn_mod.GcnTask(_gcn_graph(gf), labels, np.arange(gf.n),
                                                 _gcn_graph(ref.feats), ref.labels, ref.test,
                                                 ref.num_classes, ("B", gf.canonical.certificate)))
                pair.b_task = task_index[bkey]
        prepared.append((refs, gens, pairs, too_large))

    scores: tuple[float, ...] = ()
    if tasks and gcn_unavailable is None:
        run = gcn_mod.soft_accuracies(tasks, config.gcn_config)
        scores = run.scores
        for akey, ti in a_tasks.items():
            _EXPERIMENT_A[akey] = scores[ti]
        if run.device == "cpu":  # a GPU's sums are not reproducible: never stored
            if a_store is not None:
                a_store.put({result_key("A", k[0], k[1]): scores[ti]
                             for k, ti in a_tasks.items()})
            if store is not None:
                store.put({result_key("B", *k, config.gcn_config): scores[ti]
                           for k, ti in task_index.items()})

    results = []
    for item in prepared:
        if isinstance(item, str):
            results.append(D3Result(None, None, reason=item))
            continue
        refs, gens, pairs, too_large = item
        samples = [_sample(gi, gf, note, refs, pairs, scores,
                           gcn_unavailable or too_large.get(gi))
                   for gi, (gf, note) in enumerate(gens)]
        results.append(_aggregate(samples))
    return results


def _sample(gi: int, gf: SpectralFeatures | None, note: str | None, refs: list[_Ref],
            pairs: dict[tuple[int, int], _Pair], scores: tuple[float, ...],
            gcn_unavailable: str | None) -> D3Sample:
    if gf is None:
        applies = any(r.gcn_reason is None for r in refs)
        unavailable: dict[str, str] = (
            {"gcn": gcn_unavailable} if applies and gcn_unavailable else {})
        return D3Sample(None if unavailable else 0.0, 0.0, 0.0, 0.0, float("inf"),
                        0.0 if applies and not unavailable else None, refs[0].index,
                        unavailable=MappingProxyType(unavailable), note=note)
    best: D3Sample | None = None
    for ref in refs:
        pair = pairs[(gi, ref.index)]
        mmd = 1.0 / (1.0 + pair.mmd_distance)
        parts = {"grassmann": pair.grassmann, "mmd": mmd}
        not_applicable: dict[str, str] = {}
        unavailable = {}
        gcn_value: float | None = None
        if ref.gcn_reason is not None:
            not_applicable["gcn"] = ref.gcn_reason
        elif gcn_unavailable is not None:
            unavailable["gcn"] = gcn_unavailable
        else:
            assert pair.a_key is not None
            b = pair.b_value if pair.b_task is None else scores[pair.b_task]
            assert b is not None
            gcn_value = max(0.0, 1.0 - abs(_EXPERIMENT_A[pair.a_key] - b))
            parts["gcn"] = gcn_value
        total = sum(WEIGHTS[k] for k in parts)
        renorm = sum(WEIGHTS[k] * v for k, v in parts.items()) / total
        exact = gf.canonical.exact and ref.feats.canonical.exact
        cand = D3Sample(None if unavailable else renorm, renorm, pair.grassmann, mmd,
                        pair.mmd_distance, gcn_value, ref.index, exact,
                        MappingProxyType(not_applicable), MappingProxyType(unavailable))
        if best is None or cand.renormalized > best.renormalized:
            best = cand
    assert best is not None
    return best


def _aggregate(samples: list[D3Sample]) -> D3Result:
    if not samples:
        return D3Result(0.0, 0.0, n_valid=0, reason="no valid sample")
    unavailable: dict[str, str] = {}
    for s in samples:
        unavailable.update(s.unavailable)
    values = [s.value for s in samples]
    gcns = [s.gcn for s in samples if s.gcn is not None]
    return D3Result(
        value=None if any(v is None for v in values) else fmean(v for v in values if v is not None),
        renormalized=fmean(s.renormalized for s in samples),
        grassmann=fmean(s.grassmann for s in samples),
        mmd=fmean(s.mmd for s in samples),
        gcn=fmean(gcns) if gcns else None,
        samples=tuple(samples),
        n_valid=len(samples),
        reason=("a part could not be computed: "
                + "; ".join(f"{part}: {why}" for part, why in sorted(unavailable.items()))
                if unavailable else None),
        unavailable=MappingProxyType(unavailable),
    )
