"""Read a UMLS release (or the MeSH one written by ``ebm.concepts.rrf``): MRCONSO.RRF + MRSTY.RRF.

Only the rows the concept index needs: atoms in the requested languages (English), without
suppressible rows (SUPPRESS O, E or Y), optionally restricted to some sources (SAB) and
without permuted terms (TTY PM). Semantic types become groups through
``rules/umls_semantic_groups.tsv``; a group code in the TUI column (our MeSH release) is
taken as the group itself.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ebm.concepts.groups import GROUP_NAMES, UmlsGroups
from ebm.concepts.rrf import MRCONSO_COLUMNS, MRSTY_COLUMNS
from ebm.errors import DataError

SUPPRESSIBLE = frozenset({"O", "E", "Y"})
PERMUTED_TTYS = frozenset({"PM"})

_C = {name: i for i, name in enumerate(MRCONSO_COLUMNS)}
_S = {name: i for i, name in enumerate(MRSTY_COLUMNS)}


@dataclass(frozen=True)
class Atom:
    cui: str
    text: str
    sab: str
    tty: str
    preferred: bool  # the concept's preferred name (TS=P, STT=PF, ISPREF=Y)


def release_file(directory: Path, name: str) -> Path:
    """``name`` (e.g. MRCONSO.RRF) in a release directory or its META/ subdirectory, maybe gzipped."""
    for d in (directory, directory / "META"):
        for candidate in (d / name, d / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    raise DataError(f"{name} not found in {directory} (nor in {directory / 'META'})")


def _open(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _fields(path: Path, line_no: int, line: str, n: int) -> list[str]:
    fields = line.rstrip("\r\n").split("|")
    if len(fields) < n:
        raise DataError(f"{path}:{line_no}: expected {n} '|'-separated fields, found {len(fields)}")
    return fields


def read_groups(directory: Path, table: UmlsGroups | None) -> dict[str, tuple[str, ...]]:
    """CUI -> semantic groups, from MRSTY.RRF; ``table``: rules/umls_semantic_groups.tsv
    (None: only group codes written as types, as in the MeSH release setup writes)."""
    path = release_file(directory, "MRSTY.RRF")
    out: dict[str, list[str]] = {}
    with _open(path) as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            fields = _fields(path, n, line, len(MRSTY_COLUMNS))
            cui, tui = fields[_S["CUI"]], fields[_S["TUI"]]
            group = tui if tui in GROUP_NAMES else (table.group(tui) if table is not None else None)
            if group is None:
                continue  # a semantic type outside the table: no group, concept still matched
            gs = out.setdefault(cui, [])
            if group not in gs:
                gs.append(group)
    return {k: tuple(v) for k, v in out.items()}


def count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 20), b""))


def iter_atoms(
    directory: Path,
    languages: frozenset[str] = frozenset({"ENG"}),
    sources: frozenset[str] | None = None,
    include_permuted: bool = True,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Atom]:
    """Atoms of MRCONSO.RRF kept for the index (see module docstring)."""
    path = release_file(directory, "MRCONSO.RRF")
    n = 0
    with _open(path) as f:
        for n, line in enumerate(f, start=1):
            if progress and n % 10_000 == 0:
                progress(10_000)
            if not line.strip():
                continue
            r = _fields(path, n, line, len(MRCONSO_COLUMNS))
            if r[_C["LAT"]] not in languages or r[_C["SUPPRESS"]] in SUPPRESSIBLE:
                continue
            if sources is not None and r[_C["SAB"]] not in sources:
                continue
            tty = r[_C["TTY"]]
            if not include_permuted and tty in PERMUTED_TTYS:
                continue
            text = r[_C["STR"]].strip()
            if not text:
                continue
            preferred = r[_C["TS"]] == "P" and r[_C["STT"]] == "PF" and r[_C["ISPREF"]] == "Y"
            yield Atom(r[_C["CUI"]], text, r[_C["SAB"]], tty, preferred)
    if progress and n % 10_000:
        progress(n % 10_000)
