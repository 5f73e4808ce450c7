"""``ebm serve``: the web PICO form and JSON API on http://127.0.0.1:8000/.

ebm serve [--host 127.0.0.1] [--port 8000] [--db PATH] [--rules DIR] [--warm DIR|FILE]
          [--workers N] [--deadline SECONDS] [--threads N]

Served by waitress (a pure-Python production WSGI server) from the Flask application in
``ebm.web``. Binds to loopback unless told otherwise: the server has no accounts, so anyone
who can reach it can use it.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
from pathlib import Path

from ebm.errors import InputError, ServiceError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "serve",
        help="the web PICO form for physicians (and a JSON API)",
        description="Serve the PICO question form and its answers in the browser, and POST /api/ask "
        "(a frame in, the `ebm ask --format json` document out). Binds to 127.0.0.1 by default.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--db", type=Path, help="the local store (default: the one in the data directory)")
    p.add_argument("--rules", type=Path, metavar="DIR", help="an edited copy of rules/ (ebm rules copy DIR)")
    p.add_argument(
        "--warm",
        action="append",
        type=Path,
        default=[],
        metavar="DIR|FILE",
        help="frames to answer at start-up so their citations are annotated in the cache "
        "(e.g. questions/); may be repeated",
    )
    p.add_argument(
        "--no-warm", action="store_true", help="do not load the models at start-up (the first question will)"
    )
    p.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="worker processes answering questions (default: one per core); 0: one worker thread "
        "inside the server (the design before worker processes, for comparison)",
    )
    p.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up on a question after this long (default 60)",
    )
    p.add_argument(
        "--worker-nice",
        type=int,
        default=10,
        metavar="N",
        help="CPU priority of the worker processes below the server's (default 10: pages first; 0: equal)",
    )
    p.add_argument("--threads", type=int, default=16, help="request threads (default 16)")
    p.set_defaults(func=run_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    from ebm.ask import AskConfig, default_resources
    from ebm.frame import load_frames

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port}: must be 0..65535")
    if args.threads < 2:
        raise InputError(f"--threads {args.threads}: must be at least 2 (one stays free for pages)")
    if not 0 <= args.worker_nice <= 19:
        raise InputError(f"--worker-nice {args.worker_nice}: must be 0..19")
    if args.workers is not None and args.workers < 0:
        raise InputError(f"--workers {args.workers}: must be 0 or more")
    if not 0 < args.deadline < float("inf"):
        raise InputError(f"--deadline {args.deadline}: must be a positive number of seconds")
    if args.rules is not None and not args.rules.is_dir():
        raise InputError(f"--rules {args.rules}: not a directory (make one with `ebm rules copy DIR`)")
    if args.db is not None and not args.db.is_file():
        raise InputError(f"--db {args.db}: no such store (make one with `ebm corpus ingest --db PATH FILE`)")
    frames = load_frames(args.warm) if args.warm else []
    if args.rules is not None:
        # Refuse an invalid table now, with its file and line; loaded through the per-process
        # cache, so the question reader (and a worker thread) reuse it instead of loading it again.
        default_resources(args.rules)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("waitress").setLevel(logging.WARNING)

    from ebm.web.app import LOOPBACK_HOSTS, MAX_REQUEST, create_app
    from ebm.web.server import make_server

    loopback = is_loopback(args.host)
    trusted = [h for h in LOOPBACK_HOSTS if ":" not in h] if loopback and args.host != "::1" else None
    app = create_app(
        AskConfig(db=args.db, rules=args.rules, deadline_s=args.deadline),
        warm=not args.no_warm,
        warm_frames=frames,
        trusted_hosts=trusted,
        workers=args.workers,
        worker_nice=args.worker_nice,
        api_waiters=max(1, args.threads - 4),  # four threads always free for pages
    )
    try:
        server = make_server(app, args.host, args.port, threads=args.threads, max_body=MAX_REQUEST)
    except OSError as exc:
        app.extensions["ebm_runner"].stop(timeout=5)
        raise ServiceError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}") from None
    host, port = server.getsockname()[:2]  # type: ignore[union-attr]
    shown = f"[{host}]" if ":" in str(host) else host
    print(f"ebm: serving on http://{shown}:{port}/ (Ctrl-C to stop)", flush=True)
    if not loopback:
        print(
            f"ebm: warning: listening on {args.host}, reachable from other machines; the server has no "
            "log-in: anyone who can reach it can use it",
            file=sys.stderr,
            flush=True,
        )
    # `kill` (SIGTERM) stops the server like Ctrl-C, so the worker processes are stopped too.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        app.extensions["ebm_runner"].stop(timeout=5)
        server.close()
    return 0
