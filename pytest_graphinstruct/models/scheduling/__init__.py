"""The scheduler of one backend: its queue, the issuing of each request (pacing, circuit breaker,
stop, budget), and its counters.
"""
