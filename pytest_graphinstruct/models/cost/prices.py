"""The price table: what one model's tokens cost (:class:`ModelPrice`), for every model a table
names (:class:`PriceTable`), read from the packaged snapshot (``models/data/prices.json``) or a
``--gi-prices`` file (:func:`load_prices`).

Promises:

* A table is one JSON object: ``currency`` (a word, e.g. ``USD``), ``taken`` (the date the
  prices were read, ``YYYY-MM-DD``), an optional ``source`` (text), and ``models``: model name →
  ``input_per_1m`` and ``output_per_1m`` (the list price of a million input / output tokens, a
  number ≥ 0) and an optional ``batch_discount`` (the share of the list price a batch request
  pays, in (0, 1]; default 1: no discount).  Anything else — an unknown key, a missing field, a
  value of the wrong type or out of range — is refused with one line naming the file and the
  field (:class:`~pytest_graphinstruct.errors.GraphInstructError`).
* A model is found by its exact name, else by its last ``/`` part (``openai/gpt-4o`` is
  ``gpt-4o``), never by a guess: :meth:`PriceTable.price` says ``None`` for any other.  The
  models that cost nothing to ask (:data:`FREE_MODELS`: the oracle, the embedded local model)
  are priced at zero whatever the table says.
* The packaged table is a snapshot of list prices on its ``taken`` date; prices change.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Final

from pytest_graphinstruct.errors import GraphInstructError

PER_TOKENS: Final = 1_000_000
"""Prices are per this many tokens."""
FREE_MODELS: Final[frozenset[str]] = frozenset({"oracle", "local"})
"""Models that cost nothing to ask (the oracle; the embedded model, on this machine)."""
PACKAGED: Final = "prices.json"
"""The packaged table's file in ``pytest_graphinstruct/models/data/``."""

_TABLE_KEYS: Final = frozenset({"currency", "taken", "source", "models"})
_MODEL_KEYS: Final = frozenset({"input_per_1m", "output_per_1m", "batch_discount"})


@dataclass(frozen=True)
class ModelPrice:
    """What one model's tokens cost, per :data:`PER_TOKENS` tokens, at list price; a batch
    request pays ``batch_discount`` times that."""

    input_per_1m: float
    output_per_1m: float
    batch_discount: float = 1.0

    def cost(self, input_tokens: float, output_tokens: float, *, batch: bool = False) -> float:
        """The cost of ``input_tokens`` and ``output_tokens`` (at the batch price with
        ``batch``).

        >>> ModelPrice(2.0, 8.0, 0.5).cost(1_000_000, 500_000, batch=True)
        3.0
        """
        list_price = (input_tokens * self.input_per_1m
                      + output_tokens * self.output_per_1m) / PER_TOKENS
        return list_price * self.batch_discount if batch else list_price


FREE: Final = ModelPrice(0.0, 0.0)


@dataclass(frozen=True)
class PriceTable:
    """Prices by model name, in one currency, as read on one date (``taken``); ``origin`` is
    the file they came from (the packaged snapshot's name, or a ``--gi-prices`` path)."""

    currency: str
    taken: str
    models: Mapping[str, ModelPrice]
    origin: str = PACKAGED
    source: str | None = None

    def price(self, model: str) -> ModelPrice | None:
        """``model``'s price: its own entry, else its last ``/`` part's; zero for a free
        model; ``None`` when the table has none."""
        if model in FREE_MODELS:
            return FREE
        found = self.models.get(model)
        if found is None:
            found = self.models.get(model.rsplit("/", 1)[-1].strip())
        return found

    def missing(self, models: tuple[str, ...] | list[str]) -> list[str]:
        """Those of ``models`` the table has no price for, in order."""
        return [m for m in models if self.price(m) is None]


def load_prices(path: Path | None = None) -> PriceTable:
    """The table in ``path`` (``None``: the packaged snapshot), validated strictly.

    Raises:
        GraphInstructError: the file cannot be read, is not JSON, or breaks the format (one
            line naming the file and the field).
    """
    if path is None:
        text = resources.files("pytest_graphinstruct.models").joinpath(
            "data", PACKAGED).read_text(encoding="utf-8")
        return parse_prices(text, origin=PACKAGED)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise GraphInstructError(f"--gi-prices {path}: cannot be read ({why})") from None
    return parse_prices(text, origin=str(path))


def parse_prices(text: str, *, origin: str) -> PriceTable:
    """The table a JSON ``text`` holds (``origin``: the file named in errors).

    Raises:
        GraphInstructError: see :func:`load_prices`.
    """
    where = f"--gi-prices {origin}" if origin != PACKAGED else f"the packaged {PACKAGED}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise GraphInstructError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise GraphInstructError(f"{where}: must be a JSON object with currency, taken and "
                                 "models")
    _keys(where, "", data, _TABLE_KEYS, required=("currency", "taken", "models"))
    currency = _word(where, "currency", data["currency"])
    taken = _date(where, data["taken"])
    source = data.get("source")
    if source is not None and not isinstance(source, str):
        raise GraphInstructError(f"{where}: source must be text, got {source!r}")
    models = data["models"]
    if not isinstance(models, dict) or not models:
        raise GraphInstructError(f"{where}: models must be a non-empty object of model name → "
                                 "prices")
    return PriceTable(currency, taken, {str(name): _model(where, str(name), entry)
                                        for name, entry in models.items()},
                      origin=origin, source=source)


def _keys(where: str, field: str, data: Mapping[str, object], allowed: frozenset[str], *,
          required: tuple[str, ...]) -> None:
    for key in data:
        if key not in allowed:
            raise GraphInstructError(f"{where}: unknown field {field}{key} (allowed: "
                                     f"{', '.join(sorted(allowed))})")
    for key in required:
        if key not in data:
            raise GraphInstructError(f"{where}: {field}{key} is missing")


def _word(where: str, field: str, value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 16:
        raise GraphInstructError(f"{where}: {field} must be a short word like USD, got "
                                 f"{value!r}")
    return value.strip()


def _date(where: str, value: object) -> str:
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        _dt.date.fromisoformat(value)
    except ValueError:
        raise GraphInstructError(f"{where}: taken must be a date YYYY-MM-DD, got "
                                 f"{value!r}") from None
    return value


def _model(where: str, name: str, entry: object) -> ModelPrice:
    field = f"models.{name}."
    if not isinstance(entry, dict):
        raise GraphInstructError(f"{where}: models.{name} must be an object with input_per_1m "
                                 "and output_per_1m")
    _keys(where, field, entry, _MODEL_KEYS, required=("input_per_1m", "output_per_1m"))
    values = {key: _number(where, field + key, entry[key]) for key in entry}
    discount = values.get("batch_discount", 1.0)
    if not 0 < discount <= 1:
        raise GraphInstructError(f"{where}: {field}batch_discount must be in (0, 1] (the "
                                 f"share of the list price a batch pays), got {discount!r}")
    return ModelPrice(values["input_per_1m"], values["output_per_1m"], discount)


def _number(where: str, field: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(
            value) or value < 0:
        raise GraphInstructError(f"{where}: {field} must be a number >= 0, got {value!r}")
    return float(value)
