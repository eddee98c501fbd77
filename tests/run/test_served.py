"""run.served: what the processes of a run agree on, as it travels to xdist workers."""

from __future__ import annotations

import json

import pytest

from pytest_graphinstruct.models.caching.snapshot import Snapshot
from pytest_graphinstruct.run.records.codec import ShapeError, decode, encode
from pytest_graphinstruct.run.served import Served


def test_served_travels_as_json() -> None:
    served = Served({"gpt-x": Snapshot("gpt-x-1", "fp"), "y": Snapshot()}, cache_mark=120)
    again = decode(Served, json.loads(json.dumps(encode(served))))
    assert again == served and again.snapshot("gpt-x") == "gpt-x-1"
    assert again.snapshot("y") is None and again.models() == {"gpt-x": "gpt-x-1"}
    assert decode(Served, {}) == Served()
    with pytest.raises(ShapeError, match="cache_mark"):
        decode(Served, {"cache_mark": "120"})
