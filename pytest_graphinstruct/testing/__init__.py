"""Fakes to test against, shipped with the package (as pytest ships ``pytester``): a local
OpenAI-compatible server with scripted faults (:mod:`.openai_server`) and its Batch API
(:mod:`.batch_server`).  Our own tests use them; so can yours, to run the plugin against an
endpoint you control; the oracle endpoint (:mod:`.oracle_server`) answers a suite's
prompts with the oracle's answers.  Nothing else in the package imports this folder but the
command line's ``serve-oracle``."""
