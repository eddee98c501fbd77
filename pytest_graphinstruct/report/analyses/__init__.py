"""Cross-run analyses over any set of runs (docs/ANALYSES.md): the paper's analyses, the
leaderboard and the contamination probe, listed by name in :mod:`.registry`.  Each is a
function from its inputs (classified runs of :mod:`.run_set`, or two reports) to a typed result,
whose tables :mod:`.table` writes."""
