"""The live terminal view of an active run: the progress line's numbers (:mod:`.progress`) and
the line redrawn in place on a terminal (:mod:`.line`)."""
