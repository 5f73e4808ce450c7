"""``ebm serve``: the web PICO form and JSON API on http://127.0.0.1:8000/.

ebm serve [--host 127.0.0.1] [--port 8000] [--db PATH] [--rules DIR] [--warm DIR|FILE]

Served by waitress (a pure-Python production WSGI server) from the Flask application in
``ebm.web``. Binds to loopback unless told otherwise: the server has no accounts, so anyone
who can reach it can use it.
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
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
    p.add_argument("--threads", type=int, default=4, help="request threads (default 4)")
    p.set_defaults(func=run_serve)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run_serve(args: argparse.Namespace) -> int:
    from ebm.ask import AskConfig
    from ebm.frame import load_frames

    if not 0 <= args.port <= 65535:
        raise InputError(f"--port {args.port}: must be 0..65535")
    if args.threads < 1:
        raise InputError(f"--threads {args.threads}: must be at least 1")
    if args.rules is not None and not args.rules.is_dir():
        raise InputError(f"--rules {args.rules}: not a directory (make one with `ebm rules copy DIR`)")
    if args.db is not None and not args.db.is_file():
        raise InputError(f"--db {args.db}: no such store (make one with `ebm corpus ingest --db PATH FILE`)")
    frames = load_frames(args.warm) if args.warm else []
    if args.rules is not None:
        from ebm.rules import load_rules

        load_rules(args.rules)  # refuse an invalid table now, with its file and line
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("waitress").setLevel(logging.WARNING)

    from waitress.server import create_server

    from ebm.web.app import LOOPBACK_HOSTS, MAX_REQUEST, create_app

    loopback = is_loopback(args.host)
    trusted = [h for h in LOOPBACK_HOSTS if ":" not in h] if loopback and args.host != "::1" else None
    app = create_app(
        AskConfig(db=args.db, rules=args.rules),
        warm=not args.no_warm,
        warm_frames=frames,
        trusted_hosts=trusted,
    )
    try:
        server = create_server(
            app,
            host=args.host,
            port=args.port,
            threads=args.threads,
            max_request_body_size=MAX_REQUEST,
            ident="ebm",
        )
    except OSError as exc:
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
    try:
        server.run()
    finally:
        app.extensions["ebm_runner"].stop(timeout=5)
        server.close()
    return 0
