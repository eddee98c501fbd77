"""The embedded model's server as a run sees it: found before the run, started once per machine
(by the single process or the xdist controller), its address handed to the workers, stopped at
the end."""

from __future__ import annotations

from pytest_graphinstruct.models.backends.local_server import (
    LocalModel,
    LocalServer,
    endpoint_info,
    find_local_model,
)


class LocalHost:
    """The embedded model of one run and, once started, its server."""

    def __init__(self, model: LocalModel) -> None:
        self.model = model
        self.server: LocalServer | None = None

    @classmethod
    def find(cls) -> LocalHost:
        """Locate the installed model.

        Raises:
            ModelError: the ``[local]`` extra or the model package is missing (the message
                names the install command).
        """
        return cls(find_local_model())

    def start(self) -> dict[str, str]:
        """Start the server; returns what a worker needs to reach it (JSON-ready).

        Raises:
            GraphInstructError: the server did not come up.
        """
        server = LocalServer(self.model)
        server.start()
        self.server = server
        return {k: str(v) for k, v in endpoint_info(server).items()}

    @property
    def startup_s(self) -> float | None:
        return self.server.startup_s if self.server is not None else None

    def stop(self) -> None:
        """Stop the server (idempotent; nothing happens when it never started)."""
        if self.server is not None:
            self.server.stop()
