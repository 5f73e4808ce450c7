"""The ``ebm`` command line.

Each subcommand lives in its own module under ``ebm.cli`` and exposes
``register(subparsers)``, which adds its parser and sets ``func`` (taking the parsed
namespace, returning an exit code). Add a module name to ``COMMANDS`` to wire it in.
``ebm NAME`` imports only module NAME when it registers a command of that name; otherwise
(top-level help, ``ebm explain``) every module is imported.
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
    "frame",
    "findings",
    "bench",
    "serve",
]


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or with ``only`` that one (each module is imported
    to register its parser, and some import heavy libraries: ``ebm corpus stats`` need not
    import what ``ebm serve`` does)."""
    parser = argparse.ArgumentParser(
        prog="ebm", description="Evidence-based answers to clinical questions from MEDLINE."
    )
    parser.add_argument("--version", action="version", version=f"ebm {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        if only is None or name == only:
            importlib.import_module(f"ebm.cli.{name}").register(sub)
    return parser


def _command(argv: Sequence[str]) -> str | None:
    """The module of the subcommand ``argv`` names, if it has the command's name (``ebm ask``;
    ``ebm explain`` is registered by ``ask``, so all are imported); None when top-level help
    comes first (the top-level options take no values)."""
    for arg in argv:
        if arg in ("-h", "--help"):
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    return {c for a in parser._actions if isinstance(a, argparse._SubParsersAction) for c in a.choices}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Only the named subcommand's module is imported; without one (``ebm --help``, a typo),
    # all are, so that help and "invalid choice" list every command.
    command = _command(argv)
    parser = build_parser(command)
    if command is not None and command not in _choices(parser):
        parser = build_parser()  # a module name that is not a command name ("evaluate")
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
