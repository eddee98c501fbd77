"""Batch mode (``--gi-batch``): the endpoint's Batch API, its input files, the ledger of live
batches, the runner and the backend that asks through it.
"""
