"""Validation of the rule tables against MeSH, with suggestions (``ebm rules check``).

Each problem names the file, the line and what to write instead, e.g.
``rules/task_indicators.tsv:40: Diagnosis, Diferential: not a MeSH descriptor; did you mean
'Diagnosis, Differential'?``. Loading an invalid table raises ``InputError`` with the same
messages (``ebm.resources.Resources.load``).

Every table is declared once in ``ebm.rules.registry`` (file, typed columns, builder,
validator, consumers): cells are checked by their columns, required tables must exist and
have rows, then the declared validator runs (MeSH names, index entries, trigger tokens).

Tables that passed before, unchanged under the same code and data, are not validated again
(``ebm.rules.verdicts``); problems are never remembered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.errors import EbmError, InputError
from ebm.rules import qualifiers as quals
from ebm.rules.table import Table, closest, load
from ebm.rules.tables import (
    INDICATOR_TASKS,
    TREE_NUMBER,
    ClinicalQueries,
    Journals,
    StudyTypes,
    TaskIndicators,
    journal_keys,
    resolve_descriptor,
)
from ebm.rules.verdicts import Verdicts


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line else f"{self.file}: {self.message}"

    @property
    def sort_key(self) -> tuple[str, int]:
        return (self.file, self.line or 0)


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)  # file names validated
    unchecked: list[str] = field(default_factory=list)  # table files with no validator

    @property
    def ok(self) -> bool:
        return not self.problems


_LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<msg>.*)$", re.DOTALL)


def problem_from_error(exc: BaseException, path: Path) -> Problem:
    """A problem from an ``EbmError`` message, keeping a leading ``file:line:`` when present."""
    msg = str(exc)
    m = _LOCATED.match(msg)
    if m:
        return Problem(m["file"], int(m["line"]), m["msg"])
    prefix = f"{path}: "
    return Problem(str(path), None, msg[len(prefix) :] if msg.startswith(prefix) else msg)


# --- descriptor messages ------------------------------------------------------------------


def descriptor_problem(term: str, voc: Any) -> str:
    """Why ``term`` is not a descriptor name/UI, with the likeliest fix."""
    t = term.strip()
    if re.fullmatch(r"D\d{6,9}", t):
        return f"{t}: no MeSH 2024 descriptor has this UI"
    if TREE_NUMBER.match(t):
        return f"{t}: a tree number, not a descriptor; use kind 'tree'"
    if quals.canonical(t):
        return f"{t}: a MeSH qualifier (subheading), not a descriptor; use kind 'qualifier'"
    uis = voc.term_index.get(t.casefold())
    if uis:
        names = " or ".join(repr(voc.get(u).name) for u in uis)
        return f"{t}: an entry term, not a descriptor name; did you mean {names}?"
    close = voc.suggest(t)
    if close:
        return f"{t}: not a MeSH descriptor; did you mean {close[0]!r}?"
    return f"{t}: not a MeSH descriptor (no close name either)"


# --- per-table checks ---------------------------------------------------------------------


def check_task_indicators(t: TaskIndicators, voc: Any) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[tuple[str, str, str], int] = {}
    for r in t.rows:

        def bad(msg: str, r: Any = r) -> None:
            out.append(Problem(r.file, r.line, msg))

        key_term = r.term.strip()
        if r.kind in ("descriptor", "explode"):
            d = resolve_descriptor(r.term, voc)
            if d is None:
                bad(descriptor_problem(r.term, voc))
                continue
            key_term = d.ui
            if r.kind == "explode" and not d.tree_numbers:
                bad(f"{r.term}: has no tree numbers, so no children; use kind 'descriptor'")
        elif r.kind == "tree":
            if not TREE_NUMBER.match(key_term):
                d = resolve_descriptor(r.term, voc)
                if d is not None:
                    trees = ", ".join(d.tree_numbers) or "none"
                    bad(
                        f"{r.term}: a descriptor name, not a tree number; use kind 'explode' "
                        f"(or one of its tree numbers: {trees})"
                    )
                else:
                    bad(f"{r.term}: not a tree number (like E02.319.267)")
                continue
            if not voc.tree_descendants(key_term):
                bad(f"{r.term}: no MeSH 2024 descriptor at or below this tree number")
                continue
        elif r.kind == "qualifier":
            q = quals.canonical(r.term)
            if q is None:
                if resolve_descriptor(r.term, voc) is not None:
                    bad(f"{r.term}: a descriptor, not a qualifier; use kind 'descriptor' or 'explode'")
                else:
                    close = quals.suggest(r.term)
                    hint = f"; did you mean {close[0]!r}?" if close else ""
                    bad(f"{r.term}: not a MeSH qualifier (subheading){hint}")
                continue
            key_term = q
        elif r.kind == "task":
            targets = [x for x in INDICATOR_TASKS if x not in ("all", r.task)]
            if r.task == "all":
                bad("an 'all' row cannot refer to a task; list the terms instead")
                continue
            if key_term not in targets:
                nearest = closest(key_term, targets)
                hint = f"; did you mean {nearest!r}?" if nearest else ""
                bad(f"{r.term}: not a task this row can refer to ({', '.join(targets)}){hint}")
                continue
            if not any(x.task == key_term and x.kind != "task" and x.major > 0 for x in t.rows):
                bad(f"task {key_term!r} has no positive rows to refer to")
        key = (r.task, r.kind, key_term)
        if key in seen:
            bad(f"{r.term}: same {r.kind} for {r.task} as line {seen[key]}")
        else:
            seen[key] = r.line
    return out


def _is_publication_type(d: Any) -> bool:
    return any(tn.startswith("V") for tn in d.tree_numbers)


def check_study_types(t: StudyTypes, voc: Any) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    for r in t.rows:
        d = resolve_descriptor(r.term, voc)
        if d is None:
            out.append(Problem(r.file, r.line, descriptor_problem(r.term, voc)))
            continue
        if r.field == "pt" and not _is_publication_type(d):
            out.append(Problem(r.file, r.line, f"{r.term}: not a publication type; use field 'mh'"))
        if (
            r.field == "mh"
            and _is_publication_type(d)
            and not any(not tn.startswith("V") for tn in d.tree_numbers)
        ):
            out.append(Problem(r.file, r.line, f"{r.term}: a publication type; use field 'pt'"))
        if r.unless and resolve_descriptor(r.unless, voc) is None:
            out.append(Problem(r.file, r.line, "unless: " + descriptor_problem(r.unless, voc)))
        if r.s_study is None and r.grade is None:
            msg = f"{r.term}: gives neither S_STUDY nor GRADE, so it does nothing"
            out.append(Problem(r.file, r.line, msg))
        key = (r.field, d.ui)
        if key in seen:
            out.append(Problem(r.file, r.line, f"{r.term}: already on line {seen[key]}"))
        else:
            seen[key] = r.line
    return out


def check_journals(t: Journals) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for r in t.rows:
        full, _ = journal_keys(r.title)
        if full in seen:
            out.append(Problem(r.file, r.line, f"{r.title}: same title as line {seen[full]}"))
        seen.setdefault(full, r.line)
        if r.medline_ta:
            ta = "ta:" + " ".join(r.medline_ta.casefold().split())
            if ta in seen:
                out.append(Problem(r.file, r.line, f"{r.medline_ta}: same abbreviation as line {seen[ta]}"))
            seen.setdefault(ta, r.line)
    return out


def check_clinical_queries(t: ClinicalQueries, vocabulary: Any) -> list[Problem]:
    from ebm.query_syntax import QuerySyntaxError, require_subset

    store_translate: Callable[..., Any] | None
    try:  # the local store's parser, when installed: PUBMED must run there too
        from ebm.store.query import translate as store_translate
    except ImportError:
        store_translate = None
    out: list[Problem] = []
    seen: dict[tuple[str, str], int] = {}
    for r in t.rows:
        key = (r.category, r.scope)
        if key in seen:
            out.append(Problem(r.file, r.line, f"{r.category} {r.scope}: already on line {seen[key]}"))
        seen.setdefault(key, r.line)
        if r.pubmed.count("(") != r.pubmed.count(")") or r.pubmed.count('"') % 2:
            out.append(Problem(r.file, r.line, "pubmed: unbalanced parentheses or quotes"))
        elif store_translate is not None:
            try:
                store_translate(r.pubmed, vocabulary=vocabulary)
            except EbmError as exc:
                out.append(Problem(r.file, r.line, f"pubmed: the local store cannot run it: {exc}"))
        try:
            require_subset(r.subset)
        except QuerySyntaxError as exc:
            out.append(Problem(r.file, r.line, f"subset: {exc}"))
    return out


# --- whole directory ----------------------------------------------------------------------


class CheckContext:
    """What validators may read besides their own table, each loaded on first use: the
    vocabulary, the concept index's lookup (None when not built), the text pipeline's
    tokenizer and the other tables of the directory."""

    def __init__(
        self,
        directory: Path,
        built: dict[str, Any],
        vocabulary: Any = None,
        index: Path | None = None,
        tokenize: Callable[[str], list[str]] | None = None,
    ) -> None:
        self.directory = directory
        self._built = built
        self._vocabulary = vocabulary
        self._index = index
        self._tokenize = tokenize
        self._lookup: Any = False

    @property
    def vocabulary(self) -> Any:
        if self._vocabulary is None:
            from ebm.mesh import MeshVocabulary

            self._vocabulary = MeshVocabulary()  # the shipped MeSH 2024 (rules name its terms)
        return self._vocabulary

    @property
    def lookup(self) -> dict[str, Any] | None:
        if self._lookup is False:
            from ebm.concepts.index import read_lookup, read_meta

            try:  # adjectives name MeSH disorders: only a full MeSH index (setup's) can tell
                meta = read_meta(self._index) if self._index is not None else {}
                mesh_index = str(meta.get("source", "")).startswith("MeSH") and meta.get("include_permuted")
                self._lookup = read_lookup(self._index) if self._index is not None and mesh_index else None
            except EbmError:
                self._lookup = None
        return self._lookup

    def tokenize(self, text: str) -> list[str]:
        if self._tokenize is None:
            from ebm.text.pipeline import TextPipeline

            nlp = TextPipeline(abbreviations=False).nlp
            self._tokenize = lambda s: [t.text for t in nlp.tokenizer(s) if not t.is_space]
        return self._tokenize(text)

    def value(self, name: str) -> Any:
        """Another table's built value (a validator reads only tables it declares)."""
        return self._built[name][1]


def load_checked(
    directory: Path,
    vocabulary: Any = None,
    verdicts: Verdicts | None = None,
    *,
    index: Path | None = None,
    tokenize: Callable[[str], list[str]] | None = None,
) -> tuple[dict[str, tuple[Table, Any]], list[Problem]]:
    """Read every declared table of ``directory`` and validate it; (name -> (table, built
    value), problems). With ``verdicts``, a table that passed before (same bytes, code and
    data) is not validated again, and a table that passes is recorded."""
    from ebm.rules.registry import specs

    built: dict[str, tuple[Table, Any]] = {}
    problems: list[Problem] = []
    ctx = CheckContext(directory, built, vocabulary, index, tokenize)
    for spec in specs():
        path = spec.path(directory)
        if path.is_dir():
            problems.append(Problem(str(path), None, "a directory, not a table file"))
            continue
        if not path.exists():
            if spec.required:
                problems.append(Problem(str(path), None, "table missing (copy it from the shipped rules/)"))
            continue
        try:
            content = path.read_bytes()
        except OSError as exc:
            problems.append(Problem(str(path), None, f"cannot read: {exc.strerror}"))
            continue
        errors: list[InputError] = []
        try:
            table = load(path, spec.table_columns(), errors)
        except EbmError as exc:
            problems.append(problem_from_error(exc, path))
            continue
        # bad cells are reported, and the good rows still checked (every problem at once)
        cells = [problem_from_error(e, path) for e in errors]
        problems.extend(cells)
        if not errors and spec.required and not table.rows:
            problems.append(Problem(str(path), None, "no rows (this table is required: give at least one)"))
            continue
        try:
            value = spec.build(table)
        except EbmError as exc:
            problems.append(problem_from_error(exc, path))
            continue
        if not cells:
            built[spec.name] = (table, value)
        if spec.validate is None:
            continue
        key = _key(verdicts, spec, content, directory, index) if verdicts and not cells else None
        if key and verdicts and verdicts.passed(key):
            continue
        if any(r not in built for r in spec.reads):
            continue  # a table it reads has problems of its own, reported there
        try:
            found = spec.validate(table, value, ctx)
        except EbmError as exc:
            found = [problem_from_error(exc, path)]
        if key and verdicts and not found:
            verdicts.record(key)
        problems.extend(found)
    return built, problems


def _key(verdicts: Verdicts, spec: Any, content: bytes, directory: Path, index: Path | None) -> str:
    """Everything a table's verdict depends on: its bytes, the tables its validator reads,
    the code and MeSH data (``Verdicts.environment``), and for index-reading validators the
    index's state; for negation the tokenizer's versions."""
    import hashlib

    from ebm.rules.verdicts import data_state, dependency_versions

    h = hashlib.sha256(f"table {verdicts.environment} {dependency_versions()} {spec.name}\0".encode())
    h.update(content)
    for other in spec.reads:
        from ebm.rules.registry import REGISTRY

        p = REGISTRY[other].path(directory)
        h.update(p.read_bytes() if p.is_file() else b"-")
    if spec.needs_index:
        h.update(data_state(index).encode() if index is not None else b"no index")
    return h.hexdigest()[:40]


def check_directory(
    directory: Path,
    vocabulary: Any = None,
    *,
    remember: bool = True,
    index: Path | None = None,
) -> Report:
    """Validate every declared table in ``directory`` (``ebm.rules.registry``).

    With ``remember`` (and the shipped vocabulary), tables that passed before unchanged, under
    the same code and data, are not validated again (``ebm.rules.verdicts``).
    """
    from ebm.rules.registry import spec_for_file, specs

    verdicts = Verdicts() if remember and vocabulary is None else None
    report = Report()
    _, problems = load_checked(directory, vocabulary, verdicts, index=index)
    report.problems.extend(problems)
    declared = {s.path(directory).name for s in specs()}
    report.checked.extend(sorted(f for f in declared if (directory / f).is_file()))
    for path in sorted(directory.iterdir()):
        if (
            path.name not in declared
            and path.suffix in (".tsv", ".toml", ".txt")
            and spec_for_file(path.name) is None
        ):
            report.unchecked.append(path.name)
    return report


def format_problems(problems: list[Problem], limit: int = 20) -> str:
    """The lines ``ebm rules check`` prints, first ``limit`` of them."""
    ordered = sorted(problems, key=lambda p: p.sort_key)
    shown = "\n".join(str(p) for p in ordered[:limit])
    more = f"\n... and {len(ordered) - limit} more" if len(ordered) > limit else ""
    return shown + more
