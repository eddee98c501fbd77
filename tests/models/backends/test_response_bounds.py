"""The bound on a response body holds for what it decodes to: a compressed body is decoded
within it, an encoding that cannot be bounded is refused unread (issue 47 §4: a 100 KB gzip
body decoding to 500 MB took 22.7 GB and the process)."""

from __future__ import annotations

import asyncio
import gzip
import zlib
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_graphinstruct.models.backends.bounded_calls import http_package
from pytest_graphinstruct.models.backends.response_bounds import (
    ResponseTooLarge,
    UndecodableBody,
    bound_response,
)

LIMIT = 1000


def _chunks(data: bytes, size: int) -> list[bytes]:
    return [data[i:i + size] for i in range(0, len(data), size)] or [b""]


def read(body: bytes, headers: dict[str, str], *, limit: int = LIMIT,
         chunk: int = 64) -> bytes:
    """The body as a client with the hook reads it (``aread``), sent in ``chunk``-byte parts."""
    http = http_package()

    class Parts(http.AsyncByteStream):
        async def __aiter__(self) -> Any:
            for part in _chunks(body, chunk):
                yield part

    def answer(request: Any) -> Any:
        return http.Response(200, headers=headers, stream=Parts())

    async def go() -> bytes:
        async with http.AsyncClient(transport=http.MockTransport(answer),
                                    event_hooks={"response": [bound_response(http, limit)]}
                                    ) as client:
            response = await client.get("http://fake.invalid/")
            return bytes(response.content)

    return asyncio.run(go())


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


def test_an_uncompressed_body_within_the_bound_is_read_whole() -> None:
    assert read(b"x" * LIMIT, {}) == b"x" * LIMIT


def test_gzip_deflate_raw_deflate_and_two_layers_decode_to_the_body() -> None:
    body = b'{"ok": true}' * 40
    assert read(gzip.compress(body), {"content-encoding": "gzip"}) == body
    assert read(gzip.compress(body), {"content-encoding": "x-gzip"}) == body
    assert read(zlib.compress(body), {"content-encoding": "deflate"}) == body
    assert read(_raw_deflate(body), {"content-encoding": "deflate"}) == body
    twice = gzip.compress(zlib.compress(body))  # deflate applied first, then gzip
    assert read(twice, {"content-encoding": "deflate, gzip"}) == body
    assert read(b"plain", {"content-encoding": "identity"}) == b"plain"


def test_a_gzip_body_of_several_members_decodes_every_member() -> None:
    assert read(gzip.compress(b"first ") + gzip.compress(b"second"),
                {"content-encoding": "gzip"}) == b"first second"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_a_small_body_decoding_past_the_bound_stops_there(encoding: str) -> None:
    bomb = b" " * (200 * LIMIT)
    packed = gzip.compress(bomb) if encoding == "gzip" else zlib.compress(bomb)
    assert len(packed) < LIMIT  # small on the wire
    with pytest.raises(Exception) as caught:
        read(packed, {"content-encoding": encoding})
    too_large = _cause(caught.value, ResponseTooLarge)
    assert too_large is not None and too_large.decoded and too_large.limit == LIMIT
    assert "decodes to more than 1000 bytes" in str(too_large)


def test_a_body_decoding_to_exactly_the_bound_is_read() -> None:
    body = b"y" * LIMIT
    assert read(gzip.compress(body), {"content-encoding": "gzip"}) == body


@pytest.mark.parametrize("encoding", ["br", "zstd", "compress", "gzip, gzip, gzip", "x-bomb"])
def test_an_encoding_that_cannot_be_bounded_is_refused_unread(encoding: str) -> None:
    with pytest.raises(Exception) as caught:
        read(b"\x00" * 10, {"content-encoding": encoding})
    refused = _cause(caught.value, UndecodableBody)
    assert refused is not None and "although an uncompressed body was asked for" in str(refused)


def test_a_body_declared_longer_is_refused_before_reading() -> None:
    with pytest.raises(Exception) as caught:
        read(b"x" * 10, {"content-length": str(LIMIT + 1)})
    too_large = _cause(caught.value, ResponseTooLarge)
    assert too_large is not None and too_large.declared == LIMIT + 1


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=3 * LIMIT), st.sampled_from(["gzip", "deflate"]),
       st.integers(min_value=1, max_value=300))
def test_a_compressed_body_reads_as_itself_within_the_bound_and_refused_past_it(
        body: bytes, encoding: str, chunk: int) -> None:
    packed = gzip.compress(body) if encoding == "gzip" else zlib.compress(body)
    headers = {"content-encoding": encoding}
    if len(body) <= LIMIT and len(packed) <= LIMIT:
        assert read(packed, headers, chunk=chunk) == body
    else:
        with pytest.raises(Exception) as caught:
            read(packed, headers, chunk=chunk)
        assert _cause(caught.value, ResponseTooLarge) is not None


def _cause(exc: BaseException | None, kind: type[BaseException]) -> Any:
    while exc is not None and not isinstance(exc, kind):
        exc = exc.__cause__ or exc.__context__
    return exc
