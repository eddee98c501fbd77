"""FakeOpenAIServer's synchronisation points: tests wait for events, never for the clock."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import urllib.request
from typing import Any

from tests.models.fake_openai import FakeOpenAIServer


def _ask(server: FakeOpenAIServer, text: str, results: list[Any]) -> None:
    body = json.dumps({"model": "fake-model",
                       "messages": [{"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(server.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as resp:
            results.append(json.loads(resp.read())["choices"][0]["message"]["content"])
    except OSError as exc:  # the server stopped with the request held
        results.append(exc)


def _asking(server: FakeOpenAIServer, texts: list[str]) -> tuple[list[threading.Thread], list[Any]]:
    results: list[Any] = []
    threads = [threading.Thread(target=_ask, args=(server, t, results), daemon=True)
               for t in texts]
    for t in threads:
        t.start()
    return threads, results


def test_wait_for_requests_returns_once_they_arrived() -> None:
    with FakeOpenAIServer() as server:
        assert not server.wait_for_requests(1, timeout=0.05)  # nothing asked: it times out
        threads, results = _asking(server, ["a", "b"])
        assert server.wait_for_requests(2, timeout=60)
        for t in threads:
            t.join(60)
    assert sorted(results) == ["echo: a", "echo: b"]


def test_held_requests_are_counted_but_not_answered_until_released() -> None:
    with FakeOpenAIServer() as server:
        server.hold()
        assert server.holding
        threads, results = _asking(server, ["a", "b", "c"])
        assert server.wait_for_requests(3, timeout=60)
        # all three are inside the server and none has an answer: held, not slow
        assert server.max_in_flight == 3 and results == []
        server.release()
        assert not server.holding
        for t in threads:
            t.join(60)
        assert sorted(results) == ["echo: a", "echo: b", "echo: c"]
        _ask(server, "after", results)  # released: answered at once again
    assert results[-1] == "echo: after"


def test_stopping_the_server_ends_held_requests_unanswered() -> None:
    server = FakeOpenAIServer().start()
    try:
        server.hold()
        threads, results = _asking(server, ["a"])
        assert server.wait_for_requests(1, timeout=60)
    finally:
        server.stop()
    for t in threads:
        t.join(60)
        assert not t.is_alive()
    assert len(results) == 1 and isinstance(results[0], OSError)


def test_hold_after_answers_the_first_requests_only() -> None:
    with FakeOpenAIServer() as server:
        server.hold(after=2)
        first: list[Any] = []
        _ask(server, "a", first)
        _ask(server, "b", first)
        assert first == ["echo: a", "echo: b"]  # the first two: answered while holding
        threads, results = _asking(server, ["c"])
        assert server.wait_for_requests(3, timeout=60) and results == []
        server.release()
        threads[0].join(60)
    assert results == ["echo: c"]


def test_stopping_the_server_closes_idle_keep_alive_connections() -> None:
    # An idle keep-alive connection's handler waits for the next request; before, both ends
    # outlived the server, and a later server given the same port by the kernel saw them as
    # its own connections (the dripping-endpoint test counted 19 for 8 calls).
    server = FakeOpenAIServer().start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", "/v1/models")
        response = conn.getresponse()
        response.read()
        assert response.status == 200 and not response.will_close  # kept alive
        server.stop()
        assert conn.sock is not None
        assert conn.sock.recv(1) == b""  # the server's end is closed: end of file, not a wait
    finally:
        conn.close()
        server.stop()


def test_a_server_on_any_port_never_shares_it_with_live_connections() -> None:
    # no SO_REUSEADDR when the kernel picks the port: bind(0) then skips every port on which
    # a socket still lives, so the connections to a server's port are its own
    with FakeOpenAIServer() as server:
        assert server._httpd is not None
        assert server._httpd.socket.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) == 0


def _usage(server: FakeOpenAIServer, text: str) -> dict[str, int]:
    body = json.dumps({"model": "fake-model",
                       "messages": [{"role": "system", "content": "Be brief."},
                                    {"role": "user", "content": text}]}).encode()
    request = urllib.request.Request(server.base_url + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as resp:
        usage: dict[str, int] = json.loads(resp.read())["usage"]
    return usage


def test_usage_counts_words_or_the_packages_tokens_and_is_summed() -> None:
    from pytest_graphinstruct.models.backends.tokens import TokenCounter

    with FakeOpenAIServer() as server:
        words = _usage(server, "three little words")
        assert (words["prompt_tokens"], words["completion_tokens"]) == (5, 4)
        assert server.tokens_counted == (5, 4)
    counter = TokenCounter("cl100k_base")
    with FakeOpenAIServer(token_counter=counter) as server:
        counted = _usage(server, "three little words")
        _usage(server, "again")
        prompt = counter.count_messages([("system", "Be brief."),
                                         ("user", "three little words")])
        assert counted["prompt_tokens"] == prompt
        assert counted["completion_tokens"] == counter.count_text("echo: three little words")
        again = counter.count_messages([("system", "Be brief."), ("user", "again")])
        assert server.tokens_counted[0] == prompt + again
        server.reset()
        assert server.tokens_counted == (0, 0)


def test_a_server_that_keeps_no_requests_still_counts_them_and_their_usage() -> None:
    with FakeOpenAIServer(keep_requests=False) as server:
        results: list[Any] = []
        _ask(server, "one two", results)
        _ask(server, "three", results)
        assert results == ["echo: one two", "echo: three"]
        assert server.request_count == 2 and server.requests == []
        assert server.wait_for_requests(2, timeout=1) and server.wait_for_answers(2, timeout=1)
        assert server.tokens_counted == (3, 5)  # words in; "echo:" and the words out
        server.reset()
        assert server.request_count == 0 and server.tokens_counted == (0, 0)


def test_a_body_over_the_limit_gets_413_and_a_smaller_one_an_answer() -> None:
    with FakeOpenAIServer(max_request_bytes=200) as server:
        results: list[Any] = []
        _ask(server, "x" * 300, results)
        _ask(server, "short", results)
    assert isinstance(results[0], OSError) and "413" in str(results[0])
    assert results[1] == "echo: short"
    assert server.request_count == 1  # the refused one was not read, nor counted
