"""The answer cache: its records, its index, its writer, a scheduler's view of it, and which
snapshot served an answer.
"""
