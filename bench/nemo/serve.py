"""NeMo Guardrails 0.24.1's API server, as `nemoguardrails server` starts it,
but bound to loopback only and, unless --verbose, logging warnings only.

The CLI (nemoguardrails/cli/__init__.py, `server`) sets the deployment type,
points `api.app` at the config folder and calls
`uvicorn.run(app, port=PORT, log_level="info", host="0.0.0.0")`. The host is
not an option there, so this does the same with a socket bound to
127.0.0.1 on a free port, and prints `listening on 127.0.0.1:PORT` for the
harness before serving.

Its `_get_rails` builds every config as `LLMRails(config, verbose=True)`,
hard-coded: a rich console trace of every event of every check, most of a
check's time (by hand on the harness's machine, about 22 ms a check with
it and 6.5 ms without).
The harness measures the server as a production deployment would run it:
rails built with verbose=False, warnings only, no access log. --verbose
keeps the CLI's logging, to see the difference.

Usage: python serve.py CONFIG_DIR [--verbose]
"""

import logging
import os
import socket
import sys

# Read by the server module when it is imported (as the CLI's
# --disable-chat-ui does), and no usage statistics sent anywhere.
os.environ["NEMO_GUARDRAILS_DISABLE_CHAT_UI"] = "true"
os.environ["NEMO_GUARDRAILS_NO_USAGE_STATS"] = "1"
os.environ["DO_NOT_TRACK"] = "1"

import uvicorn  # noqa: E402
from nemoguardrails.server import api  # noqa: E402
from nemoguardrails.telemetry import DeploymentTypeEnum, set_deployment_type  # noqa: E402


def quiet() -> None:
    """Rails built without the verbose trace; warnings only."""
    built = api.LLMRails

    def rails(config, verbose=False):
        return built(config=config, verbose=False)

    api.LLMRails = rails
    logging.getLogger().setLevel(logging.WARNING)


def main() -> None:
    args = sys.argv[1:]
    verbose = "--verbose" in args
    args = [a for a in args if a != "--verbose"]
    if len(args) != 1:
        sys.exit("usage: serve.py CONFIG_DIR [--verbose]")
    if not verbose:
        quiet()
    set_deployment_type(DeploymentTypeEnum.API.value)
    api.app.rails_config_path = os.path.expanduser(args[0].rstrip(os.path.sep))
    api.app.disable_chat_ui = True
    # IPPROTO_TCP named, as uvicorn's own bind names it: asyncio sets
    # TCP_NODELAY only on accepted sockets whose proto says TCP, and without
    # it every answer on a kept-alive connection waits ~40 ms for the
    # client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    host, port = sock.getsockname()
    print(f"listening on {host}:{port}", flush=True)
    config = uvicorn.Config(api.app, log_level="info" if verbose else "warning")
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
