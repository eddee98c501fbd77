"""The gate: a run against its baseline (comparison), the gate's rules (gates) and the
verdict and exit status (verdict).
"""
