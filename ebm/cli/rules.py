"""``ebm rules``: validate rule tables against MeSH, or copy the shipped ones to edit.

ebm rules check [DIR]   every problem with file, line and a suggestion; exit 1 if any
ebm rules copy DIR      the shipped rules/ tables into DIR, to edit and use with --rules DIR
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from ebm.errors import InputError


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "rules",
        help="check or copy the editable rule tables",
        description="Validate the rule tables (task indicators, study types, journals, Clinical "
        "Queries filters, and other modules' tables) against MeSH 2024.",
    )
    sub = p.add_subparsers(dest="rules_command", metavar="ACTION")
    check = sub.add_parser("check", help="validate a rules directory (default: the shipped one)")
    check.add_argument("directory", nargs="?", type=Path, help="a copy of rules/ (default: shipped)")
    check.set_defaults(func=run_check)
    copy = sub.add_parser("copy", help="copy the shipped rule tables into DIR to edit them")
    copy.add_argument("directory", type=Path, help="where to put the copy (must not exist)")
    copy.set_defaults(func=run_copy)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def run_check(args: argparse.Namespace) -> int:
    from ebm.resources import shipped_rules_dir
    from ebm.rules.check import check_directory

    directory: Path = args.directory or shipped_rules_dir()
    if not directory.is_dir():
        raise InputError(f"rules directory not found: {directory}")
    report = check_directory(directory)
    for problem in sorted(report.problems, key=lambda p: p.sort_key):
        print(problem)
    n = len(report.problems)
    summary = f"{directory}: {len(report.checked)} tables checked"
    summary += f", {n} problem{'s' if n != 1 else ''}" if n else ", no problems"
    if report.unchecked:
        summary += f"; not checked (no validator): {', '.join(report.unchecked)}"
    print(summary, file=sys.stderr if n else sys.stdout)
    return 1 if n else 0


def run_copy(args: argparse.Namespace) -> int:
    from ebm.resources import shipped_rules_dir
    from ebm.rules.registry import specs

    dest: Path = args.directory
    if dest.exists():
        raise InputError(f"{dest} already exists: choose a new directory")
    src = shipped_rules_dir()
    try:
        dest.mkdir(parents=True)
        for f in sorted(src.iterdir()):
            if f.suffix in (".tsv", ".toml", ".txt") and f.is_file():
                shutil.copy2(f, dest / f.name)
        checkout = _checkout_of(src)
        if checkout is not None and _inside(dest, checkout):
            # a copy inside the ebm checkout is the user's scratch: git must not list it
            ignore = "# made by `ebm rules copy`: not part of ebm\n*\n"
            (dest / ".gitignore").write_text(ignore, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot copy the rule tables to {dest}: {exc.strerror or exc}") from None
    declared = {s.path(src).name for s in specs()}
    copied = sorted(f.name for f in dest.iterdir() if f.name in declared)
    print(
        f"copied {len(copied)} rule tables of {src} to {dest}; edit them, check with "
        f"`ebm rules check {dest}`, use with --rules {dest}"
    )
    return 0


def _checkout_of(rules: Path) -> Path | None:
    """The source checkout the shipped rules live in (a git work tree), or None when installed."""
    root = rules.resolve().parent
    return root if (root / ".git").exists() else None


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True
