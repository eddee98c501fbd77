"""The price table: the packaged snapshot, strict reading of a --gi-prices file, lookup."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_graphinstruct.errors import GraphInstructError
from pytest_graphinstruct.models.cost.prices import (
    FREE,
    PACKAGED,
    ModelPrice,
    load_prices,
    parse_prices,
)


def _table(**models: object) -> dict[str, object]:
    return {"currency": "EUR", "taken": "2025-01-31", "models": models}


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_the_packaged_table_is_a_dated_snapshot_with_batch_discounts() -> None:
    table = load_prices()
    assert table.origin == PACKAGED and table.currency == "USD"
    assert table.taken.count("-") == 2 and table.source
    gpt4o = table.price("gpt-4o")
    assert gpt4o is not None and gpt4o.batch_discount == 0.5
    assert table.price("openai/gpt-4o") == gpt4o  # the last / part
    assert table.price("no-such-model") is None
    assert table.missing(["gpt-4o", "no-such-model", "oracle"]) == ["no-such-model"]


def test_free_models_cost_nothing_whatever_the_table_says() -> None:
    table = parse_prices(json.dumps(_table(local={"input_per_1m": 9, "output_per_1m": 9})),
                         origin="x.json")
    assert table.price("local") == FREE and table.price("oracle") == FREE


def test_cost_at_list_and_batch_price() -> None:
    price = ModelPrice(input_per_1m=3.0, output_per_1m=15.0, batch_discount=0.5)
    assert price.cost(2_000_000, 100_000) == pytest.approx(6.0 + 1.5)
    assert price.cost(2_000_000, 100_000, batch=True) == pytest.approx(3.75)
    assert ModelPrice(1.0, 1.0).cost(10, 10, batch=True) == pytest.approx(2e-5)  # no discount


def test_a_valid_file_is_read(tmp_path: Path) -> None:
    path = _write(tmp_path, _table(m={"input_per_1m": 1, "output_per_1m": 2.5,
                                      "batch_discount": 1}))
    table = load_prices(path)
    assert table.origin == str(path) and table.currency == "EUR"
    assert table.price("m") == ModelPrice(1.0, 2.5, 1.0)


@pytest.mark.parametrize(("data", "field"), [
    ([], "JSON object"),
    ({"currency": "EUR", "models": {}}, "taken is missing"),
    ({**_table(m={"input_per_1m": 1, "output_per_1m": 1}), "extra": 1}, "unknown field extra"),
    (_table(), "models must be a non-empty object"),
    ({**_table(m={"input_per_1m": 1, "output_per_1m": 1}), "taken": "last week"},
     "taken must be a date"),
    ({**_table(m={"input_per_1m": 1, "output_per_1m": 1}), "currency": ""}, "currency"),
    (_table(m={"input_per_1m": 1}), "models.m.output_per_1m is missing"),
    (_table(m={"input_per_1m": -1, "output_per_1m": 1}), "models.m.input_per_1m must be"),
    (_table(m={"input_per_1m": "1", "output_per_1m": 1}), "models.m.input_per_1m must be"),
    (_table(m={"input_per_1m": True, "output_per_1m": 1}), "models.m.input_per_1m must be"),
    (_table(m={"input_per_1m": 1, "output_per_1m": 1, "batch_discount": 0}),
     "models.m.batch_discount must be in (0, 1]"),
    (_table(m={"input_per_1m": 1, "output_per_1m": 1, "cached_input": 1}),
     "unknown field models.m.cached_input"),
    (_table(m=[1, 2]), "models.m must be an object"),
])
def test_a_bad_file_is_one_line_naming_the_path_and_the_field(
        tmp_path: Path, data: object, field: str) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(GraphInstructError) as err:
        load_prices(path)
    message = str(err.value)
    assert "\n" not in message and str(path) in message and field in message


def test_an_unreadable_or_non_json_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    with pytest.raises(GraphInstructError, match=r"absent\.json: cannot be read"):
        load_prices(missing)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(GraphInstructError, match=r"bad\.json: not JSON"):
        load_prices(bad)
