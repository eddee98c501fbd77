"""The paper's analyses over any set of runs (docs/ANALYSES.md): one module per analysis, each
a pure function from classified runs (:mod:`.run_set`) to a typed result, rendered as tables by
:mod:`.render`."""
