"""Every rule table, declared once: file, typed columns, builder, validator, consumers.

A ``TableSpec`` record says how one file of a rules directory is read (``ebm.rules.table``
columns: typed cells, file:line errors, exact round trip), what it becomes (``build``: the
typed object its consumer uses), how it is checked beyond its cells (``validate``, against
MeSH or the concept index, run by ``ebm rules check`` and before a rules directory is used),
and which components read it (``consumers``: cache keys cover exactly those tables).

Adding a table is one ``register(TableSpec(...))`` call (or one entry in ``_SHIPPED``): the
resources, ``ebm rules check``, ``ebm rules copy``, the cache digests and docs/rules.md
pick it up from here. Numeric ranges are declared here too (``ranges``), so a weight of
1e308 is refused by the loader with the row's file and line.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebm.rules.table import Column, Table, number

if TYPE_CHECKING:
    from ebm.rules.check import CheckContext, Problem

# Components that read tables; a cache keys on the digest of the tables its consumer reads.
MATCHER = "matcher"  # the concept matcher (annotations and frame concepts)
NEGATION = "negation"  # negation of concepts
EXTRACTORS = "extractors"  # population, problems, interventions, outcomes, evidence grade
SCORER = "scorer"  # S_EBM, S_term, topical match
QUERY = "query"  # query formulation
INDEX = "index"  # the concept index ``ebm setup`` builds
QUESTION = "question"  # a question in plain words -> a frame (ebm frame, ebm ask QUESTION)
CONSUMERS = (MATCHER, NEGATION, EXTRACTORS, SCORER, QUERY, INDEX, QUESTION)
# What an annotation depends on (the annotation cache's key).
ANNOTATION = (MATCHER, NEGATION, EXTRACTORS)

Builder = Callable[[Table], Any]
Validator = Callable[[Table, Any, "CheckContext"], "list[Problem]"]


@dataclass(frozen=True)
class TableSpec:
    name: str  # key in Resources.tables, e.g. "task_indicators"
    file: str  # file name in a rules directory
    columns: tuple[Column, ...]
    build: Builder  # the typed object, or InputError naming file:line
    consumers: tuple[str, ...]
    description: str  # what it decides
    edit: str  # what a rule author can change
    validate: Validator | None = None  # problems beyond the cells (MeSH names, index entries)
    required: bool = True  # must exist and have at least one row
    # declared numeric ranges: column -> (minimum, maximum); applied to the columns
    ranges: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    reads: tuple[str, ...] = ()  # other tables its validator reads (part of its verdict key)
    needs_index: bool = False  # its validator reads the concept index

    def table_columns(self) -> tuple[Column, ...]:
        """The columns with the declared ranges applied to numeric ones."""
        out = []
        for c in self.columns:
            if c.name in self.ranges:
                lo, hi = self.ranges[c.name]
                n = number(
                    c.name, required=c.required, default=c.default, minimum=lo, maximum=hi, help=c.help
                )
                c = replace(c, parse=n.parse)
            out.append(c)
        return tuple(out)

    def path(self, directory: Path) -> Path:
        """The file in ``directory``: its name, or the ``.toml`` twin when only that exists."""
        p = directory / self.file
        toml = p.with_suffix(".toml")
        return toml if not p.exists() and p.suffix == ".tsv" and toml.exists() else p


REGISTRY: dict[str, TableSpec] = {}


def register(spec: TableSpec) -> TableSpec:
    """Declare a table (a new file a rules directory holds); names and files are unique."""
    for other in REGISTRY.values():
        if other.name != spec.name and other.file == spec.file:
            raise ValueError(f"{spec.file} is already declared as {other.name!r}")
    REGISTRY[spec.name] = spec
    return spec


def specs(consumer: str | Iterable[str] | None = None) -> list[TableSpec]:
    """The declared tables, in declaration order; with ``consumer``: those it reads."""
    _ensure_shipped()
    if consumer is None:
        return list(REGISTRY.values())
    wanted = {consumer} if isinstance(consumer, str) else set(consumer)
    return [s for s in REGISTRY.values() if wanted & set(s.consumers)]


def spec_for_file(name: str) -> TableSpec | None:
    _ensure_shipped()
    return next(
        (s for s in REGISTRY.values() if name in (s.file, Path(s.file).with_suffix(".toml").name)), None
    )


_loaded = False
_loading = threading.RLock()


def _ensure_shipped() -> None:
    """Register the shipped tables on first use (their modules import this one).

    Under a lock, and marked done only once every table is in: a second thread (the web app
    loads its question reader while a worker thread answers) must never see a half registry."""
    global _loaded
    if _loaded:
        return
    with _loading:
        if _loaded:
            return
        from ebm.rules import shipped

        for spec in shipped.SPECS:
            if spec.name not in REGISTRY:
                register(spec)
        _loaded = True
