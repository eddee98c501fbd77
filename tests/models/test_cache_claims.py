"""cache_claims: one process asks for a key, the others wait (bounded) for its answer or its
release; a killed owner never blocks anyone."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pytest_graphinstruct.answers import Answer
from pytest_graphinstruct.models.cache import AnswerCache
from pytest_graphinstruct.models.cache_claims import CLAIMS_DIR, Claim, KeyClaims
from pytest_graphinstruct.models.cache_format import CacheEntry
from pytest_graphinstruct.models.snapshot import Snapshot, is_stale
from tests.models.helpers import req

ROOT = Path(__file__).resolve().parents[2]
WAIT_S = 60.0  # a safety net for a broken test, never the point of one


def ok(text: str = "Graph[] {}") -> Answer:
    return Answer(text=text)


def an_entry(key: str = "k", text: str = "cached", snapshot: str | None = None) -> CacheEntry:
    return CacheEntry(key, Answer(text=text, cached=True), "ep", "m", "L1-001", 1, "c", 0,
                      snapshot=snapshot)


class _Lookups:
    """A cache lookup for :class:`KeyClaims` that answers from :attr:`answers` in turn (the
    last one repeats), running ``then`` (if any) at each call, and records the calls."""

    def __init__(self, *answers: CacheEntry | None,
                 then: Callable[[int], None] | None = None) -> None:
        self.answers = list(answers) or [None]
        self.then = then
        self.calls = 0

    def __call__(self, key: str, accept: Callable[[CacheEntry], bool] | None
                 ) -> CacheEntry | None:
        if self.then is not None:
            self.then(self.calls)
        found = self.answers[min(self.calls, len(self.answers) - 1)]
        self.calls += 1
        return found


# -- direct ----------------------------------------------------------------------------------

def test_an_uncontended_claim_is_held_at_once_and_names_its_owner(tmp_path: Path) -> None:
    lookups = _Lookups(an_entry())
    claim = KeyClaims(tmp_path, lookups).claim("k", wait_s=WAIT_S)
    try:
        assert claim.held and not claim.waited and claim.answer is None
        assert lookups.calls == 0  # nobody else asked: the cache is not looked at
        path = tmp_path / CLAIMS_DIR / "k.lock"
        assert claim.path == path
        assert path.read_text().split()[0] == str(os.getpid())
    finally:
        claim.release()
    assert not path.exists() and not claim.held


def test_a_key_that_is_not_a_safe_file_name_is_hashed(tmp_path: Path) -> None:
    for key in ("../../etc/passwd", "a b", "x" * 129, ""):
        claim = KeyClaims(tmp_path, _Lookups()).claim(key, wait_s=0)
        try:
            digest = hashlib.sha256(key.encode()).hexdigest()
            assert claim.held and claim.path == tmp_path / CLAIMS_DIR / f"{digest}.lock"
        finally:
            claim.release()
    assert list((tmp_path / CLAIMS_DIR).iterdir()) == []


def test_wait_zero_gives_up_after_one_look_when_the_key_is_taken(tmp_path: Path) -> None:
    lookups = _Lookups()
    claims = KeyClaims(tmp_path, lookups)
    owner = claims.claim("k", wait_s=0)
    try:
        late = claims.claim("k", wait_s=0)
        assert late == Claim(waited=True) and lookups.calls == 1
    finally:
        owner.release()


def test_the_waiter_takes_the_answer_when_it_appears(tmp_path: Path) -> None:
    entry = an_entry(text="the owner's")
    lookups = _Lookups(None, None, entry)
    claims = KeyClaims(tmp_path, lookups)
    owner = claims.claim("k", wait_s=0)
    try:
        got = claims.claim("k", wait_s=WAIT_S, stop=threading.Event(), poll_s=0)
        assert got.waited and not got.held and got.answer == entry.answer
        assert got.entry is entry and lookups.calls == 3
    finally:
        owner.release()


def test_accept_decides_which_entry_is_the_answer(tmp_path: Path) -> None:
    stale, fresh = an_entry(text="old", snapshot="s1"), an_entry(text="new", snapshot="s2")
    claims = KeyClaims(tmp_path, _Lookups(stale, stale, fresh))
    owner = claims.claim("k", wait_s=0)
    try:
        got = claims.claim("k", wait_s=WAIT_S, stop=threading.Event(), poll_s=0,
                           accept=lambda e: not is_stale(e.snapshot, "s2"))
        assert got.answer is not None and got.answer.text == "new"
    finally:
        owner.release()


def test_an_answer_stored_just_before_the_owner_let_go_is_taken(tmp_path: Path) -> None:
    entry = an_entry()
    owner: list[Claim] = []

    def owner_answers_and_lets_go(call: int) -> None:
        if call == 0:
            owner[0].release()  # after this look: the next lock attempt succeeds

    claims = KeyClaims(tmp_path, _Lookups(None, entry, then=owner_answers_and_lets_go))
    owner.append(claims.claim("k", wait_s=0))
    got = claims.claim("k", wait_s=WAIT_S, stop=threading.Event(), poll_s=0)
    # it got the lock, but found the answer: the claim is given back, the answer shared
    assert got.waited and not got.held and got.answer == entry.answer
    assert not (tmp_path / CLAIMS_DIR / "k.lock").exists()


def test_a_stop_already_set_cancels_the_wait(tmp_path: Path) -> None:
    claims = KeyClaims(tmp_path, _Lookups())
    owner = claims.claim("k", wait_s=0)
    stop = threading.Event()
    stop.set()
    try:
        got = claims.claim("k", wait_s=WAIT_S, stop=stop)
        assert got.cancelled and got.waited and not got.held and got.answer is None
    finally:
        owner.release()


def test_threads_of_one_process_never_hold_a_key_together(tmp_path: Path) -> None:
    claims = KeyClaims(tmp_path, _Lookups())
    n = 8
    tried = threading.Barrier(n)
    got: list[tuple[bool, bool]] = []  # (held, waited) of each thread's claim

    def take() -> None:
        claim = claims.claim("k", wait_s=0)
        got.append((claim.held, claim.waited))
        tried.wait(WAIT_S)  # every thread has tried while the winner still holds it
        claim.release()

    threads = [threading.Thread(target=take) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    # one held it, the others found it taken
    assert sorted(got) == [(False, True)] * (n - 1) + [(True, False)]


def test_release_of_a_claim_never_held_does_nothing(tmp_path: Path) -> None:
    claim = Claim(path=tmp_path / "absent.lock")
    claim.release()
    claim.release()
    assert not claim.held and not (tmp_path / "absent.lock").exists()


def test_a_released_file_is_replaced_by_a_fresh_one_for_the_next_owner(tmp_path: Path) -> None:
    claims = KeyClaims(tmp_path, _Lookups())
    claims.claim("k", wait_s=0).release()
    second = claims.claim("k", wait_s=0)
    try:
        assert second.held and not second.waited
        assert second.path is not None and second.fd is not None
        assert os.fstat(second.fd).st_ino == os.stat(second.path).st_ino  # the path's file
    finally:
        second.release()


# -- through the cache's lookup (AnswerCache.claim) ------------------------------------------

_CLAIM_HOLDER = """
import sys, time
from pytest_graphinstruct.models.cache import AnswerCache
claim = AnswerCache(sys.argv[1]).claim("k", wait_s=0)
print("held" if claim.held else "not held", flush=True)
time.sleep(60)
"""


def test_a_killed_owner_never_blocks_a_claim(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", _CLAIM_HOLDER, str(tmp_path)], cwd=ROOT,
                             stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None and child.stdout.readline() == b"held\n"
        cache = AnswerCache(tmp_path)
        busy = cache.claim("k", wait_s=0.1)
        assert not busy.held and busy.waited and busy.answer is None
        child.send_signal(signal.SIGKILL)
        child.wait(10)
        # the kernel let go of the dead owner's lock: the claim is taken at the first try,
        # without waiting (no clock needed to tell)
        mine = cache.claim("k", wait_s=10)
        assert mine.held and not mine.waited
        mine.release()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


class _Polled(threading.Event):
    """A ``stop`` event for :meth:`AnswerCache.claim` that is never set by the claim's owner
    but tells the test (:attr:`polled`) that the claim has found the key taken and waits."""

    def __init__(self) -> None:
        super().__init__()
        self.polled = threading.Event()

    def wait(self, timeout: float | None = None) -> bool:
        self.polled.set()
        return super().wait(timeout)


def _when_waiting(stop: _Polled, action: Callable[[], None]) -> threading.Thread:
    """Run ``action`` in a thread once a claim given ``stop`` is waiting."""

    def run() -> None:
        if stop.polled.wait(WAIT_S):
            action()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_waiter_gets_the_owners_answer(tmp_path: Path) -> None:
    owner, waiter = AnswerCache(tmp_path), AnswerCache(tmp_path)
    claim = owner.claim("k", wait_s=0)
    assert claim.held and not claim.waited

    def answer() -> None:
        owner.put("k", req(), ok("from the owner"))
        claim.release()

    stop = _Polled()
    _when_waiting(stop, answer)  # the owner answers once the waiter waits
    got = waiter.claim("k", wait_s=WAIT_S, stop=stop)
    assert got.waited and not got.held and got.answer is not None
    assert got.answer.text == "from the owner" and got.answer.cached


def test_a_released_claim_without_an_answer_passes_to_the_waiter(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    first = cache.claim("k", wait_s=0)
    stop = _Polled()
    # once the second waits, the owner lets go: its answer was an error, not cached
    _when_waiting(stop, first.release)
    second = cache.claim("k", wait_s=WAIT_S, stop=stop)
    assert second.held and second.waited and second.answer is None
    second.release()
    second.release()  # idempotent
    assert not (tmp_path / "claims" / "k.lock").exists()


def test_a_hung_owner_blocks_only_for_the_wait_bound(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    held = cache.claim("k", wait_s=0)
    t0 = time.monotonic()
    late = cache.claim("k", wait_s=0.3)
    # the owner never lets go: the claim gives up, having waited its whole bound (a lower
    # bound, which cannot race; a claim that never gave up would hang the test instead)
    assert not late.held and late.waited and time.monotonic() - t0 >= 0.3
    stop = _Polled()
    _when_waiting(stop, stop.set)  # stopped while it waits
    cancelled = cache.claim("k", wait_s=WAIT_S, stop=stop)
    assert cancelled.cancelled and not cancelled.held
    held.release()


def test_no_claim_when_the_directory_cannot_hold_one(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    (tmp_path / "claims").write_text("a file where the directory should be")
    claim = cache.claim("k", wait_s=1)
    assert not claim.held and not claim.waited and claim.answer is None
    claim.release()




def test_a_claim_does_not_take_a_stale_answer_for_the_owners(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    cache.put("k", req(), ok(), served=Snapshot("snap-1"))
    owner = AnswerCache(tmp_path).claim("k", wait_s=5)
    assert owner.held
    try:
        waiting = cache.claim("k", wait_s=0.2, poll_s=0.01,
                              accept=lambda e: not is_stale(e.snapshot, "snap-2"))
        assert waiting.waited and waiting.answer is None  # waited in vain, did not take it
        shared = cache.claim("k", wait_s=0.2, poll_s=0.01)
        assert shared.answer is not None and shared.entry is not None
    finally:
        owner.release()

