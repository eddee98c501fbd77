"""The pytest edge of an active benchmark run (loaded only when one is asked for).

:mod:`.entry` validates the options and registers one small plugin per concern over the run's
state in this process (:mod:`.state`): its start and end (:mod:`.lifecycle`), collection
(:mod:`.collection`), each item's outcome (:mod:`.outcomes`), the live line (:mod:`.live`) and
the terminal summary (:mod:`.summary`); only when xdist is loaded, the controller's answer
service (:mod:`.service`) and the workers' input and payloads (:mod:`.xdist_hooks`).  Beside
them: the items (:mod:`.items`), the stop on SIGINT/SIGTERM (:mod:`.signals`), the files a run
claims and writes (:mod:`.outputs`), what it covers (:mod:`.coverage`), its end
(:mod:`.finish`), a dry run (:mod:`.dry_run`) and a refused run's usage error
(:mod:`.usage`).  Each calls into the run layer (:mod:`pytest_graphinstruct.run`).
"""
