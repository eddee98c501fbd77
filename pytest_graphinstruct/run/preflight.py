"""One check of a run's inputs before any work starts (and before xdist starts its workers).

Without it each xdist worker finds a bad suite or a missing API key on its own, and pytest-xdist
reports that as an INTERNALERROR ("Unexpectedly no active workers available") that never names
the cause; a dead endpoint is found only after every request's retries.  :func:`preflight` finds
them once, in the controller (or the single process), so ``-n 2`` says what ``-n 0`` says.

It also learns, once, which model snapshot each OpenAI-compatible endpoint serves now (a 1-token
chat completion: :meth:`~.models.openai_backend.OpenAIBackend.probe_snapshot`; the embedded
model, the oracle and recorded answers need none) and compares it with the snapshots the answer
cache holds for that model (:class:`Served`, handed to every process of the run; docs/PLUGIN.md
"Cache and model snapshots").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.caching.cache import AnswerCache
from pytest_graphinstruct.models.caching.entries import CacheEntry
from pytest_graphinstruct.models.caching.lease import BATCH, PLAIN
from pytest_graphinstruct.models.caching.lease import check as check_lease
from pytest_graphinstruct.models.caching.snapshot import Snapshot, is_stale
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.model_names import backend_for
from pytest_graphinstruct.run.records.results import FingerprintChange
from pytest_graphinstruct.run.served import Served
from pytest_graphinstruct.suite.instruction import Instruction
from pytest_graphinstruct.suite.loader import Suite, load_suite

if TYPE_CHECKING:
    from pytest_graphinstruct.models.backends.recorded import Responses
    from pytest_graphinstruct.pools import ReferencePools


@dataclass(frozen=True)
class RunInputs:
    """What :func:`preflight` read, for the session of the same process to reuse: the suite,
    the recorded answers, the answer cache (opened), what the endpoints serve, one line per
    thing about them the run must say (:func:`snapshot_notes`), and the models whose
    ``system_fingerprint`` changed under the snapshot served (``fingerprints``, model →
    :func:`fingerprint_change`: one of those lines, kept for the report's ``run`` record)."""

    suite: Suite
    replay: Responses | None = None
    served: Served = field(default_factory=Served)
    notes: tuple[str, ...] = ()
    cache: AnswerCache | None = None
    pools: ReferencePools | None = None
    fingerprints: Mapping[str, FingerprintChange] = field(default_factory=dict)


def preflight(config: RunConfig, *, pools: bool = True, parse_bases: bool = True) -> RunInputs:
    """Load the suite, read the recorded answers, build every model's backend, ask each
    HTTP endpoint once whether it answers (``GET /models``; any HTTP status counts) and which
    snapshot it serves (a 1-token chat completion), and compare that with the snapshots of
    the answers cached for the model.

    The embedded ``local`` model is not checked here: the run starts its server itself.

    ``pools``: also read the reference pools (when a level 3 or 4 runs) — in the process that
    will score, so a broken pool directory stops the run before it starts.  An xdist
    controller passes ``False``: reading them would load the verifier before its workers
    start (they read the pools when they first score, from the cache of verified shards: a
    broken pool directory is then an error of every item that needs it, naming the problem).
    ``parse_bases``: parse the L5 base graphs while loading the suite (:func:`load_suite`); an
    xdist controller passes ``False`` (the parser imports networkx, ~0.15 s before its workers
    start; they parse them at collection, where a malformed one stops the run).

    Returns:
        The suite, recorded answers and cache read (a session of this process need not read
        them again), what the endpoints serve, and the lines the run must say about it.

    Raises:
        GraphInstructError: the suite is missing, malformed or empty; the baseline is of
            another suite or lacks a cell of the run; the recorded answers cannot be read;
            the reference pools (needed by a level 3 or 4 of the run) cannot be read;
            ``--gi-shard`` asks for more shards than the run selects instructions, or its
            shard holds none; a backend cannot be built (an unset API key variable for a host
            that is not loopback — :mod:`~pytest_graphinstruct.run.model_names` —, a malformed
            base URL); an endpoint does not answer (one line saying why); a ``--gi-batch``
            run's batch ledger exists but cannot be read
            (:class:`~pytest_graphinstruct.models.batch.ledger.LedgerUnreadable`); or a run
            without ``--gi-batch`` would ask an endpoint whose batches the cache's ledger holds
            live (:func:`check_live_batches`); the answer cache's folder is held by a
            ``--gi-batch`` run, or this is one and another run holds it
            (:class:`~pytest_graphinstruct.models.caching.lease.CacheBusy`);
            ``--gi-d3-device=cuda`` and CUDA is not usable.
    """
    suite = load_suite(config.suite, levels=config.levels, parse_bases=parse_bases)
    _check_baseline(config, suite)
    needs_pools = pools and not config.dry_run and bool({3, 4} & {i.level for i in suite})
    pools_read = load_pools(config) if needs_pools else None
    if config.d3_device != "cpu":  # cuda without CUDA: said now, not by every scored item
        from pytest_graphinstruct.score.gcn_device import GcnDeviceError, resolve_device

        try:
            resolve_device(config.d3_device)
        except GcnDeviceError as exc:
            raise GraphInstructError(f"--gi-d3-device={config.d3_device}: {exc}") from None
    if config.replay is not None:
        from pytest_graphinstruct.models.backends.recorded import read_responses

        responses = read_responses(config.replay, suite, levels=config.levels)
        _check_shard(config, suite, responses)
        return RunInputs(suite, responses, pools=pools_read)
    _check_shard(config, suite, None)
    cache = AnswerCache(config.cache_dir) if config.cache_dir is not None else None
    if config.cache_dir is not None and not config.dry_run:
        # a --gi-batch run has its cache folder alone; other runs share theirs (claims)
        check_lease(config.cache_dir, PLAIN if config.batch is None else BATCH)
    if config.batch is not None and config.cache_dir is not None:
        from pytest_graphinstruct.models.batch.ledger import BatchLedger

        BatchLedger(config.cache_dir)  # a damaged ledger: refused before any request
    snapshots: dict[str, Snapshot] = {}
    notes: list[str] = []
    fingerprints: dict[str, FingerprintChange] = {}
    for model in config.models:
        if model in ("local", "oracle"):  # nothing to check: the oracle needs only the suite
            continue  # (and building it would load the verifier before xdist's workers start)
        backend = backend_for(model, base_url=config.base_url, api_key_env=config.api_key_env,
                               timeout_s=config.timeout_s, max_retries=config.max_retries,
                               model_version=config.model_version(model))
        check_live_batches(config, model, getattr(backend, "endpoint", None))
        check = getattr(backend, "preflight", None)
        reason = check() if callable(check) else None
        if reason:
            raise GraphInstructError(f"--gi-model={model}: {reason} (checked once before the "
                                     "run; nothing was asked)")
        probe = getattr(backend, "probe_snapshot", None)
        if not callable(probe):
            continue
        served, why = probe()
        snapshots[model] = served
        notes += snapshot_notes(config, model, served, why, cache=cache,
                                endpoint=backend.endpoint)
        change = fingerprint_change(served, cached_entries(cache, backend.endpoint, model))
        if change is not None:
            fingerprints[model] = change
    return RunInputs(suite, served=Served(snapshots, None if cache is None else cache.mark),
                     notes=tuple(notes), cache=cache, pools=pools_read,
                     fingerprints=fingerprints)


def load_pools(config: RunConfig) -> ReferencePools | None:
    """The run's reference pools (``None``: none configured), their features, matches and
    verified shard digests cached on disk by the pools' content hash — under the answer cache,
    else the user's cache folder.

    Raises:
        GraphInstructError: the pools cannot be read.
    """
    if config.pools is None:
        return None
    from pytest_graphinstruct.pools import ReferencePools, default_cache_dir

    cache = config.cache_dir
    return ReferencePools.load(config.pools,
                               cache_dir=(cache / "pools") if cache else default_cache_dir())


def check_live_batches(config: RunConfig, model: str, endpoint: str | None) -> None:
    """Refuse a run without ``--gi-batch`` that would ask ``model`` at ``endpoint`` while the
    cache folder's batch ledger holds a live batch of that endpoint (a killed or interrupted
    batch run's): its requests would be sent, and paid for, a second time while the endpoint
    still runs and bills the batch (docs/MODELS.md "Batch mode").  Nothing to check in batch
    mode (it resumes them), without a cache folder or ledger, or for a backend with no
    endpoint.

    Raises:
        GraphInstructError: one line naming the ledger, the live batches (ids escaped and
            bounded) and the two ways on (:func:`~.models.batch_ledger.live_message`); or
            :class:`~pytest_graphinstruct.models.batch.ledger.LedgerUnreadable` when the ledger
            cannot be read (it may name such batches).
    """
    if config.batch is not None or config.cache_dir is None or endpoint is None:
        return
    from pytest_graphinstruct.models.batch.ledger import LEDGER_NAME, BatchLedger, live_message

    if not (config.cache_dir / LEDGER_NAME).exists():
        return
    ledger = BatchLedger(config.cache_dir)
    live = ledger.live(endpoint)
    if live:
        raise GraphInstructError(live_message(config.cache_dir / LEDGER_NAME, model, live))


def snapshot_notes(config: RunConfig, model: str, served: Snapshot, why: str | None, *,
                   cache: AnswerCache | None, endpoint: str) -> list[str]:
    """The lines a run says about ``model`` before it begins: the version the user expects
    when the endpoint serves another, and what becomes of the answers cached for the model at
    ``endpoint`` (the cache's records of that endpoint name and model): those of another
    snapshot are asked again (or reused with ``gi_reuse_stale_cache``, said so); when the
    endpoint names no snapshot, nothing is known and they are reused as before."""
    out = []
    expected = config.model_version(model)
    if expected is not None and served.model is not None and served.model != expected:
        out.append(f"{model}: --gi-model-version={expected}, but the endpoint serves "
                   f"{served.describe()}")
    entries = cached_entries(cache, endpoint, model)
    if not entries:
        return out
    if served.model is None:
        out.append(f"{model}: the endpoint did not say which snapshot it serves ({why}); "
                   f"nothing is known against the {len(entries)} answer(s) cached for it, "
                   "which are reused as before")
        return out
    out += fingerprint_notes(model, served, entries)
    stale = Counter(e.snapshot for e in entries if is_stale(e.snapshot, served.model))
    if not stale:
        return out
    olds = ", ".join(f"{n} from {name}"
                     for name, n in sorted(stale.items(), key=lambda kv: str(kv[0])))
    total = sum(stale.values())
    if config.reuse_stale_cache:
        out.append(f"{model}: reusing stale cached answers on purpose (gi_reuse_stale_cache): "
                   f"the cache holds {total} answer(s) of another snapshot ({olds}) than the "
                   f"one the endpoint serves now ({served.model})")
    else:
        out.append(f"{model}: the cache holds {total} answer(s) of another snapshot ({olds}) "
                   f"than the one the endpoint serves now ({served.model}): this run asks "
                   "again for those it needs (the ini setting gi_reuse_stale_cache = true "
                   "reuses them)")
    return out


def cached_entries(cache: AnswerCache | None, endpoint: str, model: str) -> list[CacheEntry]:
    """The answers ``cache`` holds for ``model`` at ``endpoint`` (none without a cache)."""
    return [e for e in (cache.entries() if cache is not None else ())
            if e.endpoint == endpoint and e.model == model]


def fingerprint_change(served: Snapshot,
                       entries: Iterable[CacheEntry]) -> FingerprintChange | None:
    """What changed when answers cached from the snapshot served now came with another
    ``system_fingerprint`` than the endpoint names now (its backend configuration changed):
    the snapshot, the fingerprint served and the others with their counts.  ``None``
    otherwise (a fingerprint not known on either side says nothing)."""
    if served.model is None or served.fingerprint is None:
        return None
    other = Counter(e.fingerprint for e in entries
                    if e.snapshot == served.model and e.fingerprint is not None
                    and e.fingerprint != served.fingerprint)
    if not other:
        return None
    return FingerprintChange(served.model, served.fingerprint, dict(sorted(other.items())))


def fingerprint_notes(model: str, served: Snapshot,
                      entries: Iterable[CacheEntry]) -> list[str]:
    """One line when the fingerprint changed (:func:`fingerprint_change`): shown, never
    compared — those answers are reused (OpenAI changes the fingerprint often and serves
    several at once for one snapshot), but a score that moved may be why.  None otherwise."""
    change = fingerprint_change(served, entries)
    return [] if change is None else [change.line(model)]


def _check_baseline(config: RunConfig, suite: Suite) -> None:
    """A ``--gi-baseline`` that exists must be of this suite (the levels both ran hold the
    same files) and hold the run's cells (:func:`~.verdict.plan_baseline`), checked before
    any work."""
    baseline = config.baseline
    if baseline is None or config.update_baseline or not baseline.exists():
        return
    from pytest_graphinstruct.run.gate.plan import GateOptions, plan_baseline
    from pytest_graphinstruct.run.provenance import level_hashes, suite_dir_hash

    plan_baseline(GateOptions.of(config), [c.label for c in config.cells],
                  level_hashes=level_hashes(suite),
                  suite_hash_for=lambda levels: suite_dir_hash(config.suite, levels))


def first_per_level(instructions: Iterable[Instruction], n: int | None) -> list[Instruction]:
    """The instructions, or only the first ``n`` of each level in their order
    (``--gi-per-level``; ``None``: all)."""
    if n is None:
        return list(instructions)
    seen: dict[int, int] = {}
    out = []
    for inst in instructions:
        seen[inst.level] = seen.get(inst.level, 0) + 1
        if seen[inst.level] <= n:
            out.append(inst)
    return out


def _check_shard(config: RunConfig, suite: Suite, responses: Responses | None) -> None:
    """``--gi-shard=K/N`` must fit the instructions the run selects before sharding (the
    suite's, cut by ``--gi-per-level``, with recorded answers only those recorded), checked
    before any request (:func:`~.shard.check_selection`)."""
    if config.shard is None:
        return
    from pytest_graphinstruct.run.shard import check_selection

    recorded = None if responses is None else {r.instruction_id for r in responses}
    check_selection({inst.id: inst.level for inst in first_per_level(suite, config.per_level)
                     if recorded is None or inst.id in recorded}, config.shard)
