"""Remembered passes of rule-table validation, so that start-up skips re-validating unchanged tables.

Validating the tables takes seconds: MeSH names and entry terms, the Clinical Queries filters
parsed by the local store, and for other modules' tables spaCy's tokenizer. A table that passed
is recorded under a key made of everything its verdict depends on: the table's bytes, the
validator, the source of ``ebm``, ``extractors`` and ``rules``, the MeSH data, the shipped rule
tables, the Python version, and for other modules' validators also the spaCy/scispacy versions,
the concept index in the data directory and the whole directory's tables (a validator may read
a sibling table). Any change gives a new key, so the table is validated again.

Only passes are recorded: a table with problems is validated every time and reported with the
same messages. Records are empty files in ``data_dir()/cache/rule-verdicts``; deleting that
directory forces every table to be validated again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import sys
from pathlib import Path

from ebm.paths import data_dir

DIRNAME = "rule-verdicts"
# Bump when what a key covers changes.
FORMAT = 1
# Packages whose source can change a verdict (everything a validator may run).
CODE_PACKAGES = ("ebm", "extractors", "rules")
# Distributions other modules' validators use (negation triggers are tokenized with spaCy).
EXTERNAL_DEPENDENCIES = ("spacy", "scispacy")
TABLE_SUFFIXES = (".tsv", ".toml", ".txt")
MAX_RECORDS = 500  # older records are removed beyond this many


@functools.cache
def code_digest() -> str:
    """A digest of the source of ``CODE_PACKAGES``, read once per process: the code this
    process runs was imported at start-up, so later edits on disk must not change its key."""
    h = hashlib.sha256(f"{FORMAT} {sys.version}".encode())
    for name in CODE_PACKAGES:
        pkg = importlib.import_module(name)
        for root in sorted(Path(p) for p in pkg.__path__):
            for f in sorted(root.rglob("*.py")):
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
    return h.hexdigest()


@functools.cache
def dependency_versions() -> str:
    from importlib import metadata

    out = []
    for dist in EXTERNAL_DEPENDENCIES:
        try:
            out.append(f"{dist}=={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist} missing")
    return " ".join(out)


def directory_digest(directory: Path) -> str:
    """A digest of every table file in ``directory`` (names and bytes)."""
    h = hashlib.sha256()
    for f in sorted(directory.iterdir()):
        if f.suffix in TABLE_SUFFIXES and f.is_file():
            h.update(f.name.encode() + b"\0")
            h.update(f.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def data_state(index: Path) -> str:
    """Name, size and modification time of the concept index's files (a rebuilt index
    changes them)."""
    files = sorted(f for f in index.iterdir() if f.is_file()) if index.is_dir() else []
    return "index:" + ",".join(f"{f.name}/{f.stat().st_size}/{f.stat().st_mtime_ns}" for f in files)


def environment() -> str:
    """What every verdict depends on: code and MeSH data."""
    from ebm.mesh import data_digest

    return f"{code_digest()} {data_digest()}"


class Verdicts:
    """The recorded passes, in ``root`` (default: ``data_dir()/cache/rule-verdicts``)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or data_dir() / "cache" / DIRNAME

    @functools.cached_property
    def environment(self) -> str:
        return environment()

    def passed(self, key: str) -> bool:
        return (self.root / key).is_file()

    def record(self, key: str) -> None:
        """Remember a pass; an unwritable data directory only costs speed."""
        with contextlib.suppress(OSError):
            self.root.mkdir(parents=True, exist_ok=True)
            (self.root / key).touch()
            records = list(self.root.iterdir())
            if len(records) > MAX_RECORDS:
                records.sort(key=lambda p: p.stat().st_mtime)
                for p in records[: len(records) - MAX_RECORDS]:
                    p.unlink(missing_ok=True)
