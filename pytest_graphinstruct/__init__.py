"""pytest-graphinstruct: benchmark and regression-test graph-generating LLMs (GraphInstruct).

The package core (``suite``, ``graphs``, ``verify``, ``score``) never imports pytest; the pytest
plugin sits at the edge.  The most used entry points are re-exported here.
"""

from __future__ import annotations

__version__ = "0.1.0"
