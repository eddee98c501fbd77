"""What produced a run, for the report's ``run`` record (:class:`~.results.RunInfo`).

Each helper answers one question and never fails the run: a value it cannot find is absent
(``None``), never guessed.  Nothing here reads a user name, an environment's secrets or an API
key; endpoint URLs lose their user, password, query and fragment (:func:`public_url`).
"""

from __future__ import annotations

import hashlib
import os
import platform
import socket
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.backends.recorded import ReplayCheck
from pytest_graphinstruct.models.caching.snapshot import CacheSource, sorted_snapshots
from pytest_graphinstruct.models.scheduling.request_stats import Sent
from pytest_graphinstruct.run.config import RunConfig
from pytest_graphinstruct.run.records.results import (
    CacheUse,
    FingerprintChange,
    GitState,
    ItemFilter,
    ItemResult,
    Machine,
    RunInfo,
    Spend,
)
from pytest_graphinstruct.suite.loader import Suite
from pytest_graphinstruct.suite.shipped import describe_suite
from pytest_graphinstruct.vocab import LEVELS, Level

GIT_TIMEOUT_S = 3.0
"""How long each ``git`` call may take before the commit is left absent."""


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second (``2025-03-04T05:06:07+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def machine() -> Machine:
    """This machine: host name, platform, Python (implementation and version), CPU count."""
    try:
        host: str | None = socket.gethostname() or None
    except OSError:
        host = None
    return Machine(hostname=host, platform=platform.platform(),
                   python=f"{platform.python_implementation()} {platform.python_version()}",
                   cpu_count=os.cpu_count())


def git_state(root: Path, *, timeout_s: float = GIT_TIMEOUT_S) -> GitState | None:
    """The commit checked out at ``root`` and whether tracked files differ from it (untracked
    files do not count: a run store or cache under the rootdir would always count otherwise);
    ``None`` when ``root`` is not in a git work tree, git is missing, or it takes longer than
    ``timeout_s``.  ``dirty`` is ``None`` when the commit is known but the status is not."""
    commit = _git(root, timeout_s, "rev-parse", "--verify", "HEAD")
    if not commit:
        return None
    status = _git(root, timeout_s, "status", "--porcelain", "--untracked-files=no")
    return GitState(commit=commit.strip(), dirty=None if status is None else bool(status.strip()))


def _git(root: Path, timeout_s: float, *args: str) -> str | None:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}  # status must not write the index
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=timeout_s, env=env, check=False)
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    return done.stdout if done.returncode == 0 else None


def suite_hash(suite: Suite) -> str | None:
    """``sha256:<hex>`` of the level files the suite's instructions came from (each file's
    name and bytes, in name order), so a run on the same files has the same hash wherever they
    lie; ``None`` when a file cannot be read any more or an instruction names none."""
    files = sorted({inst.source for inst in suite}, key=lambda s: (Path(s).name, s))
    if not files or not all(files):
        return None
    return files_hash([Path(f) for f in files])


def suite_dir_hash(root: Path, levels: Sequence[int] | None) -> str | None:
    """The :func:`suite_hash` a run of the suite at ``root`` restricted to ``levels`` (all
    level files present: ``None``) records, from the files alone (nothing parsed)."""
    if root.is_file():
        return files_hash([root])
    wanted = LEVELS if levels is None else levels
    return files_hash([f for lv in wanted if (f := root / f"level_{lv}.json").is_file()])


def files_hash(files: Sequence[Path]) -> str | None:
    """``sha256:<hex>`` over each file's name and bytes, in name order (``None``: no file, or
    one cannot be read)."""
    if not files:
        return None
    digest = hashlib.sha256()
    for path in sorted(files, key=lambda p: (p.name, str(p))):
        try:
            data = path.read_bytes()
        except OSError:
            return None
        label = path.name.encode("utf-8")
        digest.update(len(label).to_bytes(8, "big") + label)
        digest.update(len(data).to_bytes(8, "big") + data)
    return f"sha256:{digest.hexdigest()}"


def level_hashes(suite: Suite) -> dict[Level, str]:
    """Level → ``sha256:<hex>`` of the bytes of the one file its instructions came from; a
    level whose file cannot be read any more, or that came from several files, is left out."""
    files: dict[Level, set[str]] = {}
    for inst in suite:
        files.setdefault(inst.level, set()).add(inst.source)
    out = {}
    for lv, names in sorted(files.items()):
        if len(names) == 1 and all(names):
            digest = file_sha256(Path(next(iter(names))))
            if digest is not None:
                out[lv] = digest
    return out


def file_sha256(path: Path | None) -> str | None:
    """``sha256:<hex>`` of the bytes of ``path`` (the ``--gi-replay`` file); ``None`` for no
    file or one that cannot be read."""
    if path is None:
        return None
    try:
        with Path(path).open("rb") as fh:
            return f"sha256:{hashlib.file_digest(fh, 'sha256').hexdigest()}"
    except OSError:
        return None


def public_url(url: str) -> str:
    """``url`` without anything that may be a secret: user, password, query and fragment."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<unparseable URL>"
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{port}" if port is not None else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def endpoints(config: RunConfig, local: Mapping[str, str] | None = None) -> dict[str, str | None]:
    """Each model's endpoint (:func:`public_url`); ``None`` for answers that come from no
    endpoint (the oracle, recorded answers).  An OpenAI-compatible model's is
    ``--gi-base-url``, else ``OPENAI_BASE_URL``, else the OpenAI default, as its backend
    chooses; the embedded model's is its server's."""
    out: dict[str, str | None] = {}
    for model in config.models:
        if config.replay is not None or model == "oracle":
            out[model] = None
        elif model == "local":
            url = (local or {}).get("base_url")
            out[model] = public_url(url) if url else None
        else:
            from pytest_graphinstruct.models.backends.openai_backend import DEFAULT_BASE_URL

            out[model] = public_url(config.base_url or os.environ.get("OPENAI_BASE_URL")
                                    or DEFAULT_BASE_URL)
    return out


def cached_samples(results: Iterable[ItemResult]) -> dict[str, int]:
    """Samples whose answer came from the answer cache, per cell label (every cell of
    ``results`` named, with 0 when none did).  Only the process that obtained the answers
    knows this (:attr:`~.results.SampleResult.cached` is not written to reports)."""
    out: dict[str, int] = {}
    for r in results:
        out[r.cell] = out.get(r.cell, 0) + sum(s.cached for s in r.samples)
    return out


def cache_use(results: Iterable[ItemResult], cached: Mapping[str, int],
              sources: Mapping[str, CacheSource] | None = None,
              served: Mapping[str, str | None] | None = None) -> dict[str, CacheUse]:
    """Per cell: the samples of ``results`` and how many of them ``cached`` (cell → count,
    summed over the processes that obtained answers) says came from the answer cache;
    ``sources`` (cell → :class:`~.models.snapshot.CacheSource`, merged over the processes)
    says which snapshots those were cached from and when the oldest was cached, ``served``
    (cell → snapshot) what the endpoint served during the run."""
    samples: dict[str, int] = {}
    for r in results:
        samples[r.cell] = samples.get(r.cell, 0) + len(r.samples)
    out = {}
    for cell, n in samples.items():
        hits = int(cached.get(cell, 0))
        source = (sources or {}).get(cell) if hits else None
        out[cell] = CacheUse(
            cached=hits, samples=n,
            snapshots=() if source is None else tuple(sorted_snapshots(source.snapshots)),
            oldest=None if source is None or source.oldest is None else utc_time(source.oldest),
            served=(served or {}).get(cell))
    return out


def spend(sent: Mapping[str, Sent] | None, prices: Path | None) -> dict[str, Spend] | None:
    """Per model, what ``sent`` (model → :class:`~.models.request_stats.Sent`, summed over
    the processes that asked) says the run really sent, with its cost at the prices of the
    price table ``prices`` (``None``: the packaged one): the batch price for the tokens a batch
    line answered (``--gi-batch``), the list price for the rest, and the request lines in
    batches still live at the endpoint (``in_flight``: not priced); ``None`` when no model had an
    endpoint (nothing to record: the oracle, recorded answers).  A model the table has no
    price for, or a table that cannot be read, leaves the cost ``None``."""
    if not sent:
        return None
    from pytest_graphinstruct.models.cost.prices import PriceTable, load_prices

    table: PriceTable | None
    try:
        table = load_prices(prices)
    except (GraphInstructError, OSError, ValueError):
        table = None
    out = {}
    for model, s in sorted(sent.items()):
        price = None if table is None else table.price(model)
        cost = None if price is None else round(
            price.cost(s.input_tokens - s.batch_input_tokens,
                       s.output_tokens - s.batch_output_tokens)
            + price.cost(s.batch_input_tokens, s.batch_output_tokens, batch=True), 9)
        out[model] = Spend(requests=s.requests, retries=s.retries, input_tokens=s.input_tokens,
                           output_tokens=s.output_tokens, cost=cost,
                           currency=None if cost is None or table is None else table.currency,
                           cached=s.cached, batched=s.batch_requests or None,
                           in_flight=s.batch_in_flight or None)
    return out


def utc_time(unix: float) -> str:
    """A Unix time as UTC ISO 8601 to the second."""
    return datetime.fromtimestamp(unix, UTC).isoformat(timespec="seconds")


def _suite_named(folder: Path) -> dict[str, str | None]:
    """The ``suite_name`` and ``suite_version`` of a run of the suite in ``folder``."""
    name, version = describe_suite(folder)
    return {"suite_name": name, "suite_version": version}


def run_info(config: RunConfig, *, started: str | None, suite: Suite | None,
             rootdir: Path | None, results: Sequence[ItemResult], item_filter: ItemFilter,
             cached: Mapping[str, int] | None = None,
             local: Mapping[str, str] | None = None,
             sources: Mapping[str, CacheSource] | None = None,
             served: Mapping[str, str | None] | None = None,
             replay: ReplayCheck | None = None,
             sent: Mapping[str, Sent] | None = None,
             fingerprints: Mapping[str, FingerprintChange] | None = None) -> RunInfo:
    """The ``run`` record of a run of ``config`` that started at ``started`` and ends now:
    this machine, the suite and its hash (``suite``: what the run loaded; ``None``: never
    loaded), the git state of ``rootdir``, each model's endpoint (``local``: the embedded
    server's), ``item_filter``, and per cell the samples of ``results`` answered from the cache
    (``cached``: counts from other processes; default: those ``results`` carry), the
    snapshots and age of those answers (``sources``, cell → what the processes reused),
    the snapshot each model's endpoint served (``served``, model → snapshot), what
    reading the recorded answers skipped (``replay``), what each model's endpoint was
    really sent (``sent``, model → counts summed over the processes; :func:`spend`) and the
    models whose ``system_fingerprint`` changed under the snapshot served (``fingerprints``:
    the preflight's :attr:`~.preflight.RunInputs.fingerprints`; not written when none)."""
    def text(value: object) -> str | None:
        return None if value is None else str(value)

    return RunInfo(
        started=started, finished=utc_now(), machine=machine(), suite=str(config.suite),
        suite_hash=None if suite is None else suite_hash(suite),
        level_hashes={} if suite is None else level_hashes(suite),
        git=None if rootdir is None else git_state(rootdir),
        endpoints=endpoints(config, local), filter=item_filter, pools=text(config.pools),
        replay=text(config.replay), replay_sha256=file_sha256(config.replay),
        replay_problems=replay,
        cache_dir=text(config.cache_dir),
        cache=cache_use(results, cached_samples(results) if cached is None else cached,
                        sources, {c.label: (served or {}).get(c.model) for c in config.cells}),
        spend=spend(sent, config.prices), d3_device=d3_device(config),
        fingerprint_changes=dict(fingerprints) if fingerprints else None,
        **_suite_named(config.suite))


def d3_device(config: RunConfig) -> str | None:
    """The device D3's GCNs train on in a run of ``config`` (``auto`` resolved), or ``None``
    when it cannot (the run's preflight has said why)."""
    from pytest_graphinstruct.score.gcn_device import GcnDeviceError, resolve_device

    try:
        return resolve_device(config.d3_device)
    except GcnDeviceError:
        return None
