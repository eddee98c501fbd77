"""How much of a response body is read: a bound on the bytes that arrive *and* on the bytes
they decode to.

Promises (:func:`bound_response`, an httpx ``response`` event hook):

* A body whose ``Content-Length`` declares more than the bound is refused before any of it is
  read (:class:`ResponseTooLarge` with ``declared``).
* A body is asked for uncompressed (``Accept-Encoding: identity``, :mod:`.bounded_calls`).  One
  that comes compressed anyway — ``gzip`` (``x-gzip``) or ``deflate`` (zlib-wrapped or raw), up to
  :data:`MAX_LAYERS` layers — is decoded here, chunk by chunk, and never more than the bound of
  decoded bytes is produced: a 100 KB gzip body that decodes to 100 MB stops one byte past the
  bound (:class:`ResponseTooLarge`).  The HTTP client then sees it as identity (the
  ``Content-Encoding`` header is taken off), so nothing decodes it a second time.
* A body in an encoding not decoded here (``br``, ``zstd``, ``compress``, more layers) is
  refused before its body is read (:class:`UndecodableBody`): the client's own decoder would
  give no bound on what it produces.
* A body that is longer than the bound on the wire (compressed or not) stops there too.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

MAX_RESPONSE_BYTES = 8 * 1024 * 1024
"""The most bytes of one response body read from the endpoint, and the most it may decode to
(8 MiB, as a batch output line): a graph answer of 16,384 tokens is about 64 KB of text, so only
a broken or hostile endpoint sends more.  A longer body is not read further
(:class:`ResponseTooLarge`)."""
MAX_LAYERS = 2
"""The most content encodings one body may carry (``gzip, gzip`` is the most seen in use)."""
DECODED = frozenset({"gzip", "x-gzip", "deflate"})
"""The content encodings decoded here, with a bound on what they produce."""


class ResponseTooLarge(Exception):
    """The response body is longer than the bound; it was not read further.

    Attributes:
        limit: the bound, in bytes.
        declared: the length the response's ``Content-Length`` declared (``None``: it was
            found reading).
        decoded: the bound was passed by what the body decodes to (a compressed body).
    """

    def __init__(self, limit: int, declared: int | None = None, *,
                 decoded: bool = False) -> None:
        said = "" if declared is None else f" (Content-Length {declared})"
        what = "decodes to more than" if decoded else "is larger than"
        super().__init__(f"the response body {what} {limit} bytes{said}")
        self.limit = limit
        self.declared = declared
        self.decoded = decoded


class UndecodableBody(Exception):
    """The response body came in a content encoding not decoded here (see the module): it was
    not read."""

    def __init__(self, encodings: list[str]) -> None:
        shown = ", ".join(e[:20] for e in encodings[:4]) + (", …" if len(encodings) > 4 else "")
        super().__init__(f"the response body is encoded as '{shown}' although an uncompressed "
                         f"body was asked for (only gzip or deflate, at most {MAX_LAYERS} "
                         "layers, are decoded within the bound)")
        self.encodings = encodings


class _Inflater:
    """One ``gzip`` or ``deflate`` layer, decoded incrementally; every call produces at most
    the bytes left under the bound (:class:`ResponseTooLarge` past it)."""

    def __init__(self, coding: str, limit: int) -> None:
        self.gzip = coding != "deflate"
        self.limit = limit
        self.produced = 0
        self._zlib = self._new(raw=False)
        self._started = False

    def _new(self, *, raw: bool) -> Any:
        wbits = 16 + zlib.MAX_WBITS if self.gzip else (-zlib.MAX_WBITS if raw else zlib.MAX_WBITS)
        return zlib.decompressobj(wbits)

    def feed(self, data: bytes) -> bytes:
        """The bytes ``data`` decodes to (the next gzip member is begun where one ends)."""
        parts: list[bytes] = []
        while data:
            room = self.limit - self.produced
            try:
                # max_length = room + 1: one byte past the bound is enough to know, and 0
                # would mean "no limit"
                out = self._zlib.decompress(data, room + 1)
            except zlib.error:
                if self.gzip or self._started:
                    raise
                self._zlib = self._new(raw=True)  # a deflate body without the zlib wrapper
                out = self._zlib.decompress(data, room + 1)
            self._started = True
            self._count(out)
            parts.append(out)
            data = self._zlib.unused_data if self._zlib.eof else b""
            if data:  # a gzip body may hold several members, one after another
                self._zlib = self._new(raw=False)
        return b"".join(parts)

    def flush(self) -> bytes:
        out = self._zlib.flush()
        self._count(out)
        return bytes(out)

    def _count(self, out: bytes) -> None:
        self.produced += len(out)
        if self.produced > self.limit:
            raise ResponseTooLarge(self.limit, decoded=True)


def _bounded_stream(http: Any, inner: Any, limit: int, encodings: list[str]) -> Any:
    """``inner`` (a response's byte stream) as the bytes it decodes to under ``encodings``
    (listed in the order they were applied), raising :class:`ResponseTooLarge` once more than
    ``limit`` bytes came in, or would come out."""
    layers = [_Inflater(coding, limit) for coding in reversed(encodings)]

    class Bounded(http.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            async for chunk in inner:
                seen += len(chunk)
                if seen > limit:
                    raise ResponseTooLarge(limit)
                for layer in layers:
                    chunk = layer.feed(chunk)
                if chunk:
                    yield chunk
            tail = b""
            for layer in layers:  # what each layer still holds, down the chain
                tail = layer.feed(tail) + layer.flush()
            if tail:
                yield tail

        async def aclose(self) -> None:
            await inner.aclose()

    return Bounded()


def bound_response(http: Any, limit: int = MAX_RESPONSE_BYTES
                   ) -> Callable[[Any], Awaitable[None]]:
    """An httpx ``response`` event hook (run once the headers are in, before the body is read)
    holding the module's promises: ``http`` is the HTTP package (``httpx`` or ``httpx2``)."""

    async def hook(response: Any) -> None:
        declared = str(response.headers.get("content-length") or "")
        if declared.isdigit() and int(declared) > limit:
            raise ResponseTooLarge(limit, int(declared))
        encodings = [value.strip().lower() for value in
                     response.headers.get_list("content-encoding", split_commas=True)]
        encodings = [e for e in encodings if e and e != "identity"]
        if encodings:
            if len(encodings) > MAX_LAYERS or any(e not in DECODED for e in encodings):
                raise UndecodableBody(encodings)
            del response.headers["content-encoding"]  # decoded here, not again by the client
        response.stream = _bounded_stream(http, response.stream, limit, encodings)

    return hook
