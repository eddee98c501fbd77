"""The base URL of an OpenAI-compatible endpoint: checked (``http``/``https``, a host, a valid
port, no credentials) and shown with its secrets hidden."""

from __future__ import annotations

import urllib.parse

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.escaping import escape
from pytest_graphinstruct.options import DEFAULT_API_KEY_ENV

CREDENTIAL_WORDS = ("key", "token", "secret", "password", "passwd", "pass", "auth", "sig",
                    "credential")
"""A base URL's query parameter whose name contains one of these (any case) is a credential."""


def check_base_url(url: str, api_key_env: str = DEFAULT_API_KEY_ENV,
                   source: str = "base URL") -> None:
    """Raise a one-line :class:`ModelError` unless ``url`` is ``http(s)://host[:port]/...``
    without credentials (no userinfo, no query parameter named like a key: see
    :func:`_is_credential_name`).  The message never shows a secret: userinfo and credential
    values are ``***`` (:func:`redact_url`).  ``source`` names where the URL came from."""
    shown = escape(" ".join(redact_url(url).split()))
    where = "base URL" if source == "base URL" else f"base URL from {source}"
    hint = "expected http://host[:port]/v1 or https://..."
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port out of range or not a number
    except ValueError as exc:
        why = str(exc) if "@" not in url else "unparseable host part"  # never quote userinfo
        raise ModelError(f"invalid {where} {shown!r}: {why} ({hint})") from None
    if parts.scheme not in ("http", "https"):
        what = (f"unsupported scheme {parts.scheme!r}" if "://" in url
                else "no http:// or https:// scheme")
        raise ModelError(f"invalid {where} {shown!r}: {what} ({hint})")
    if not parts.hostname:
        raise ModelError(f"invalid {where} {shown!r}: no host ({hint})")
    found = [*(["user:password@" if parts.password is not None else "user@"]
               if "@" in parts.netloc else []),
             *(f"query parameter {name!r}" for name, _ in
               urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
               if _is_credential_name(name))]
    if found:
        raise ModelError(
            f"the {where} {shown!r} carries credentials ({', '.join(found)}): they would be "
            f"written into the answer cache and reports; remove them and put the API key in the "
            f"environment variable named by --gi-api-key-env (now {api_key_env})")


def _is_credential_name(name: str) -> bool:
    """Whether a query parameter's name looks like a credential (:data:`CREDENTIAL_WORDS`)."""
    lowered = name.lower()
    return any(word in lowered for word in CREDENTIAL_WORDS)


def redact_url(url: str) -> str:
    """``url`` with its userinfo and the values of credential-named query parameters written
    ``***`` — safe to show.  Plain string work, so a malformed URL is redacted too; everything
    between ``//`` and the last ``@`` before the query counts as userinfo (a password holding
    a raw ``/`` included: better one path character too many hidden than a secret shown)."""
    start = url.find("//")
    if start >= 0:
        stop = min((i for i in (url.find("?", start), url.find("#", start)) if i >= 0),
                   default=len(url))
        at = url.rfind("@", start + 2, stop)
        if at >= 0:
            url = url[: start + 2] + "***" + url[at:]
    head, sep, tail = url.partition("?")
    if not sep:
        return url
    query, hash_sep, fragment = tail.partition("#")
    pieces = []
    for piece in query.split("&"):
        name, eq, _ = piece.partition("=")
        if not _is_credential_name(urllib.parse.unquote_plus(name)):
            pieces.append(piece)
        else:
            pieces.append(f"{name}=***" if eq else "***")
    return head + sep + "&".join(pieces) + hash_sep + fragment


def split_query(url: str) -> tuple[str, str]:
    """``url`` without its query (and fragment), and the query."""
    parts = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit(parts._replace(query="", fragment="")), parts.query
