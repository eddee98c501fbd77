"""The base URL's checks and redaction, without building a backend."""

from __future__ import annotations

import pytest

from pytest_graphinstruct.errors import ModelError
from pytest_graphinstruct.models.backends.base_url import check_base_url, redact_url, split_query


def test_redact_url_hides_userinfo_and_credential_values_only() -> None:
    assert redact_url("https://u:p@h/v1?api-version=1&api_key=s#f") == \
        "https://***@h/v1?api-version=1&api_key=***#f"
    assert redact_url("http://h:8000/v1") == "http://h:8000/v1"


def test_check_base_url_names_the_source_and_never_the_secret() -> None:
    check_base_url("http://127.0.0.1:8000/v1?api-version=2024-02-01")
    with pytest.raises(ModelError) as caught:
        check_base_url("https://h/v1?sig=hunter2", "MY_KEY", "$OPENAI_BASE_URL")
    message = str(caught.value)
    assert "hunter2" not in message and "$OPENAI_BASE_URL" in message and "MY_KEY" in message


def test_split_query() -> None:
    assert split_query("https://h/v1?a=1#x") == ("https://h/v1", "a=1")
