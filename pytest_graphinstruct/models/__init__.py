"""Model answers: recorded responses (and, later, live backends, cache and scheduler)."""

from __future__ import annotations
