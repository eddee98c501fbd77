"""The regression statistics: is a run worse than its baseline, and what could the gate see.

:mod:`.paired` (the fixed-suite sign-flip test, the gate's default), :mod:`.bootstrap` (the
percentile intervals of a run's own scores and the template-clustered test), :mod:`.sequential`
(the adaptive ``--gi-samples=auto`` looks), :mod:`.multiple` (the family-wise rule over a
run's (cell, level) tests) and :mod:`.power` (the drop the gate detects from a baseline's
scores).  Formulas in docs/SCORING.md.
"""
