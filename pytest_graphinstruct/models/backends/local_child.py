"""The embedded model's server process: llama.cpp's own HTTP server, run in-process by xllamacpp.

:class:`~pytest_graphinstruct.models.backends.local_server.LocalServer` runs this module as a
child process (``python -m pytest_graphinstruct.models.backends.local_child --model … --port …``);
it is the only module that imports ``xllamacpp`` (a prebuilt wheel of llama.cpp, no compiler:
docs/MODELS.md, "The embedded model"), so the plugin and the test processes never load it.

It builds xllamacpp's ``CommonParams`` from the command line — the model file and the name it is
served under (``model_alias``), ``host:port``, the context window, CPU threads for generation and
for prompt processing — plus settings of its own:

* ``n_parallel = 1``: one slot, so the whole context belongs to one request (requests queue,
  as with the former ``llama-cpp-python`` server);
* ``cache_prompt = False`` and no host-memory prompt cache (``cache_ram_mib = 0``): every
  request is evaluated from an empty context, so an answer does not depend on what was asked
  before it (llama.cpp does not promise bit-identical logits for a prompt evaluated in other
  batch splits, and a 135M model's greedy choice can flip on a near tie);
* :data:`SAMPLING_DEFAULTS`: what a request that does not say gets.  llama.cpp's own default
  repetition penalty is 1.0 (none); the former ``llama-cpp-python`` server applied 1.1 over the
  last 64 tokens, which the embedded model's committed baseline and documented figures were
  measured with (without it the grammar-constrained cell looped to ``--gi-max-tokens`` on 12 of
  48 instructions instead of 0).  Every other sampling default (temperature 0.8, top-k 40,
  top-p 0.95, min-p 0.05, a random seed) is the same in both servers.

:data:`SETTINGS_ID` names the settings that change answers; it is part of the endpoint id, so
answers cached under other settings are not reused.

``xllamacpp.Server(params)`` loads the model and serves the OpenAI-compatible API
(``/v1/models``, ``/v1/chat/completions`` with llama.cpp's ``"grammar"`` extension and
``usage``) from threads of its own; this process then waits for SIGTERM or SIGINT and exits
(status 0; a server that does not shut down within :data:`STOP_GRACE_S` is left to process
exit).  A server that fails to start exits with status 1 after one line naming the error; the
parent reports the tail of the log.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, Final

#: How long the server's own shutdown may take after SIGTERM before the process just exits.
STOP_GRACE_S: Final = 2.0
#: Sampling defaults of the server (``CommonParams.sampling``), for requests that do not set them.
SAMPLING_DEFAULTS: Final = {"penalty_repeat": 1.1, "penalty_last_n": 64}
#: The settings that change answers, in the endpoint id (cache keys): derived from them, so a
#: changed penalty cannot keep reusing answers cached under the old one.
SETTINGS_ID: Final = f"rp{SAMPLING_DEFAULTS['penalty_repeat']}+nocache"
_STOP_SIGNALS: Final = {signal.SIGTERM, signal.SIGINT}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m pytest_graphinstruct.models.backends.local_child",
                                 description="Serve a GGUF model with xllamacpp until SIGTERM.")
    ap.add_argument("--model", required=True, help="the GGUF file")
    ap.add_argument("--alias", required=True, help="the model name it is served under")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--n-ctx", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=1,
                    help="CPU threads for generation and for prompt processing")
    return ap.parse_args(argv)


def _set(obj: Any, name: str, value: Any) -> None:
    """Set a parameter that this xllamacpp version has (an unknown name is an error: a silently
    ignored setting would change the answers)."""
    if not hasattr(obj, name):
        raise AttributeError(f"xllamacpp {type(obj).__name__} has no attribute {name!r}")
    setattr(obj, name, value)


def build_params(xlc: Any, args: argparse.Namespace) -> Any:
    """xllamacpp's ``CommonParams`` for ``args`` (module ``xlc``)."""
    params = xlc.CommonParams()
    params.model.path = args.model
    _set(params, "model_alias", {args.alias})
    _set(params, "hostnames", [args.host])
    _set(params, "port", args.port)
    _set(params, "n_ctx", args.n_ctx)
    _set(params, "n_parallel", 1)
    _set(params, "cache_prompt", False)
    _set(params, "cache_ram_mib", 0)
    for cpu in (params.cpuparams, params.cpuparams_batch):
        _set(cpu, "n_threads", args.threads)
    for name, value in SAMPLING_DEFAULTS.items():
        _set(params.sampling, name, value)
    return params


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # Block the stop signals before the server starts its threads (they inherit the mask), so
    # they reach only the sigwait below.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        import xllamacpp as xlc

        server = xlc.Server(build_params(xlc, args))
    except Exception as exc:
        print(f"local_child: the server did not start: {type(exc).__name__}: {exc}",
              file=sys.stderr, flush=True)
        return 1
    print(f"local_child: serving {args.alias} at {server.listening_address} "
          f"(pid {os.getpid()})", file=sys.stderr, flush=True)
    received = signal.sigwait(_STOP_SIGNALS)
    print(f"local_child: stopping on {signal.Signals(received).name}", file=sys.stderr,
          flush=True)
    # ``del`` runs the server's destructor (it stops the HTTP server and the main loop); a
    # destructor that hangs on a request in progress must not keep the process alive.
    timer = threading.Timer(STOP_GRACE_S, os._exit, args=(0,))
    timer.daemon = True
    timer.start()
    del server
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
