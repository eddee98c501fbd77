"""Suites: typed instructions, the constraint language, loading GraphInstruct JSON files."""

from __future__ import annotations
