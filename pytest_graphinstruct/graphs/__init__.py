"""Graphs as the verifier sees them: parsing raw model answers, applying edits, serializing."""

from __future__ import annotations
