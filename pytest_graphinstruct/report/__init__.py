"""Reports for people, in layers (docs/ARCHITECTURE.md): :mod:`.commands` (the report
commands' work) over :mod:`.analyses` (cross-run analyses, by name in :mod:`.analyses.registry`)
over :mod:`.render` (terminal, Markdown, failures, HTML) and :mod:`.live` (the live progress
line), over :mod:`.untrusted` (escaping) and :mod:`.pick` (choosing a report's cell).  The JSON
report's schema is ``schema.json``."""

from __future__ import annotations
