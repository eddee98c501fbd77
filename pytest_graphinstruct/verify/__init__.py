"""The verifier: constraint checks, graph-type validators, L5 task semantics, verdicts."""

from __future__ import annotations
