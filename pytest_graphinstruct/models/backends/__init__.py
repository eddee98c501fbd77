"""The backends: the OpenAI-compatible client and its calls (deadline, retries, failures, usage,
probes), the embedded model's server, recorded answers and replay, and the registry that picks
one.
"""
