"""call_failures: what a failed HTTP attempt means — its one line, whether it is retried, how
long the server asked us to wait, and whether it is the endpoint's fault."""

from __future__ import annotations

import json
import socket
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_graphinstruct.models.backends.bounded_calls import DeadlineExceeded, http_package
from pytest_graphinstruct.models.backends.call_failures import (
    Failure,
    FailureClassifier,
    Malformed,
    connection_detail,
    error_detail,
)
from tests.models.helpers import connection_error, http_request, status_error

classify = FailureClassifier(2.5, "MY_KEY").classify


def body(message: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, **({"code": code} if code else {})}}


@pytest.mark.parametrize(("status", "retryable", "fault"), [
    (500, True, True), (502, True, True), (503, True, True),
    (408, True, False), (409, True, False), (429, True, False),
    (400, False, False), (422, False, False), (404, False, True),
    (401, False, True), (403, False, True),
])
def test_status_codes(status: int, retryable: bool, fault: bool) -> None:
    failure = classify(status_error(status, body("nope")))
    assert (failure.retryable, failure.endpoint_fault) == (retryable, fault)
    assert str(status) in failure.message and "nope" in failure.message


def test_an_authentication_failure_names_the_key_variable() -> None:
    failure = classify(status_error(401, body("bad key")))
    assert failure.message == "authentication failed (HTTP 401; check MY_KEY): bad key"


def test_other_client_errors_say_they_are_not_retried() -> None:
    assert classify(status_error(400, body("bad", "invalid_request"))).message == (
        "HTTP 400 (not retried): [invalid_request] bad")


@pytest.mark.parametrize("where", ["code", "type", "attribute"])
def test_an_exhausted_quota_is_the_endpoints_fault_and_not_retried(where: str) -> None:
    inner: dict[str, Any] = {"message": "You exceeded your quota"}
    if where != "attribute":
        inner[where] = "insufficient_quota"
    exc = status_error(429, {"error": inner})
    if where == "attribute":
        exc.code = "insufficient_quota"
    failure = classify(exc)
    assert (failure.retryable, failure.endpoint_fault) == (False, True)
    assert failure.message.startswith("quota exhausted (HTTP 429 insufficient_quota)")


@pytest.mark.parametrize(("headers", "wait"), [
    ({"retry-after": "7"}, 7.0), ({"retry-after": "1.5"}, 1.5),
    ({"retry-after-ms": "250"}, 0.25), ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
    ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0), ({"retry-after": "later"}, None),
    ({}, None),
])
def test_the_servers_wait_is_read_from_its_headers(headers: dict[str, str],
                                                   wait: float | None) -> None:
    assert classify(status_error(429, body("slow down"), headers=headers)).retry_after == wait
    assert classify(status_error(503, headers=headers)).retry_after == wait


def test_a_status_error_without_a_response_has_no_wait() -> None:
    exc = status_error(503)
    exc.response = None
    assert classify(exc).retry_after is None


def test_timeouts_connections_and_bodies_are_the_endpoints_fault_and_retried() -> None:
    request = http_request()
    cases = {  # the failure's text, and whether the endpoint may have an answer unread
        DeadlineExceeded(): (
            "request timed out: the whole call exceeded its deadline of 2.5 s", True),
        openai.APITimeoutError(request=request): ("request timed out after 2.5 s", True),
        connection_error(ConnectionRefusedError(111, "Connection refused")): (
            "connection error (ConnectionRefusedError: [Errno 111] Connection refused)", False),
        Malformed("no 'choices' in the response"): (
            "malformed response body: no 'choices' in the response", True),
        json.JSONDecodeError("Expecting value", "<html>", 0): (
            "malformed response body: JSONDecodeError: Expecting value: line 1 column 1 "
            "(char 0)", True),
        KeyError("choices"): ("malformed response body: KeyError: 'choices'", True),
    }
    timeouts = (DeadlineExceeded, openai.APITimeoutError)
    for exc, (message, unread) in cases.items():
        # a timeout lasted the whole deadline: confirmed even on a request's first attempt
        assert classify(exc) == Failure(message, retryable=True, endpoint_fault=True,
                                        unread=unread, timed_out=isinstance(exc, timeouts))


def test_a_connection_never_made_has_no_answer_unread_a_broken_one_may() -> None:
    http = http_package()
    never = [connection_error(http.ConnectError("refused")),
             connection_error(OSError("wrapped")) , openai.APITimeoutError(request=http_request())]
    never[1].__cause__.__cause__ = socket.gaierror(-2, "Name or service not known")
    never[2].__cause__ = http.ConnectTimeout("connect timed out")
    assert [classify(exc).unread for exc in never] == [False, False, False]
    broken = [connection_error(http.RemoteProtocolError("peer closed connection")),
              connection_error(http.ReadError("reset")), connection_error()]
    assert [classify(exc).unread for exc in broken] == [True, True, True]
    for status in (500, 429, 400):  # the endpoint said it did not answer
        assert not classify(status_error(status, body("no"))).unread


def test_a_response_that_fails_validation_is_malformed() -> None:
    response = http_package().Response(200, request=http_request())
    failure = classify(openai.APIResponseValidationError(response, None, message="bad shape"))
    assert failure == Failure("malformed response body: bad shape", retryable=True,
                              endpoint_fault=True, unread=True)


def test_anything_else_is_not_retried_and_not_the_endpoints_fault() -> None:
    assert classify(openai.OpenAIError("client misuse")) == Failure(
        "OpenAIError: client misuse", retryable=False)
    assert classify(RuntimeError("a bug")) == Failure("unexpected error RuntimeError: a bug",
                                                      retryable=False)


def test_connection_detail_without_a_cause() -> None:
    assert connection_detail(connection_error()) == "connection error"
    exc = connection_error()
    exc.__context__ = OSError("reset")
    assert connection_detail(exc) == "connection error (OSError: reset)"


def test_error_detail_reads_the_body_then_the_raw_text_then_the_message() -> None:
    assert error_detail(status_error(500, body("inner", "server_error"))) == (
        "[server_error] inner")
    assert error_detail(status_error(500, {"message": "flat", "type": "oops"})) == "[oops] flat"
    assert error_detail(status_error(500, "<html>502 Bad Gateway</html>")) == (
        "<html>502 Bad Gateway</html>")
    assert error_detail(status_error(500, None, message="the client's text")) == (
        "the client's text")
    assert error_detail(status_error(500, {"error": {"message": "", "code": 5}},
                                     message="fallback")) == "fallback"


@given(st.text(min_size=1, max_size=1000))
def test_error_detail_is_one_line_cut_at_300_characters(message: str) -> None:
    detail = error_detail(status_error(500, body(message)))
    assert "\n" not in detail and len(detail) <= 301
    words = " ".join(message.split())
    assert detail == (words if len(words) <= 300 else words[:300] + "…")


def test_a_reset_connection_says_why_from_under_the_silent_read_error() -> None:
    http = http_package()
    silent = http.ReadError("")
    silent.__cause__ = ConnectionResetError(104, "Connection reset by peer")
    failure = classify(connection_error(silent))
    assert failure.message == "connection error (ReadError: [Errno 104] Connection reset by peer)"
    assert failure.retryable and failure.endpoint_fault and not failure.timed_out


def test_a_body_in_an_encoding_that_cannot_be_bounded_is_the_endpoints_fault_not_retried() -> None:
    from pytest_graphinstruct.models.backends.response_bounds import UndecodableBody

    exc = connection_error(UndecodableBody(["br"]))
    failure = classify(exc)
    assert failure.message.startswith("response body not read: the response body is encoded "
                                      "as 'br' although an uncompressed body was asked for")
    assert not failure.retryable and failure.endpoint_fault and failure.unread
