"""Scoring: the paper's dimensions D1–D5, level and total quality, aggregates."""

from __future__ import annotations
