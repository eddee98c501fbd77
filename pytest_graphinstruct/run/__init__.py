"""The run layer: configuration, sessions, typed results, gates and the oracle."""
