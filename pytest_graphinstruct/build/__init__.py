"""The suite builder: our own templates and generators → instructions with verified references.

Entry point :func:`pytest_graphinstruct.build.suite.build_suite` (command
``python -m pytest_graphinstruct build suite``); one module per level (``level0`` … ``level5``)
exposes ``build_level<L>(seed, count)``.  See docs/SUITE.md.
"""
