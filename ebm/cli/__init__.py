"""The ``ebm`` command line.

Each subcommand lives in its own module under ``ebm.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (taking the parsed
namespace, returning an exit code). Add a module name to ``COMMANDS`` to wire it in.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from ebm import __version__
from ebm.errors import EbmError

# Order is the order shown in ``ebm --help``.
COMMANDS: list[str] = [
    "setup",
    "corpus",
    "concepts",
    "annotate",
    "evaluate",
    "rules",
    "ask",
    "bench",
    "serve",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ebm", description="Evidence-based answers to clinical questions from MEDLINE."
    )
    parser.add_argument("--version", action="version", version=f"ebm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"ebm.cli.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except EbmError as exc:
        print(f"ebm: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ebm: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
