"""Reports: the JSON report (GraphInstruct quality.json schema, extended) and summaries."""

from __future__ import annotations
