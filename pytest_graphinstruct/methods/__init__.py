"""Generation methods beyond plain prompting (constrained decoding)."""

from __future__ import annotations
