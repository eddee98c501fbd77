"""The pytest edge of an active benchmark run (loaded only when one is asked for).

:mod:`.entry` validates the options and registers the hooks: :mod:`.hooks` (each hook a few
lines handing one step to the run driver) and, only when xdist is loaded, :mod:`.xdist_hooks`.
The driver (:mod:`.driver`) holds the run's state in one process and does its steps, calling
into the run layer (:mod:`pytest_graphinstruct.run`); beside it: the items (:mod:`.items`), the
stop on SIGINT/SIGTERM (:mod:`.signals`), the files a run claims and writes (:mod:`.outputs`),
what it covers (:mod:`.coverage`), its end (:mod:`.finish`), the live line (:mod:`.live`), the
terminal summary (:mod:`.summary`), a refused run's usage error (:mod:`.usage`) and the one
record each way between the xdist controller and its workers (:mod:`.payload`).
"""
