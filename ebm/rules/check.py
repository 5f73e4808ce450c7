"""Validation of the rule tables against MeSH, with suggestions (``ebm rules check``).

Each problem names the file, the line and what to write instead, e.g.
``rules/task_indicators.tsv:40: Diagnosis, Diferential: not a MeSH descriptor; did you mean
'Diagnosis, Differential'?``. Loading an invalid table raises ``InputError`` with the same
messages (``ebm.rules.load_rules``).

Tables owned by other modules are checked through ``VALIDATORS``: file name ->
``"module:callable"``. The callable takes the table's path; it is usually the module's own
loader: raising ``EbmError`` means invalid (the message becomes the problem, a leading
``path:line:`` kept), returning anything means valid, except a list of ``Problem``, which is
reported as such (for validators that find several problems at once). To hook a new table
in, add one line to ``VALIDATORS``.

Tables that passed before, unchanged under the same code and data, are not validated again
(``ebm.rules.verdicts``); problems are never remembered.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.errors import EbmError, InputError
from ebm.rules import qualifiers as quals
from ebm.rules.table import closest
from ebm.rules.tables import (
    INDICATOR_TASKS,
    TABLE_FILES,
    TREE_NUMBER,
    ClinicalQueries,
    Journals,
    StudyTypes,
    TaskIndicators,
    journal_keys,
    load_clinical_queries,
    load_journals,
    load_study_types,
    load_task_indicators,
    resolve_descriptor,
    table_path,
)
from ebm.rules.verdicts import Verdicts

# Tables of other modules: file name -> "module:callable(path)". A missing module or
# attribute is reported as "not checked", never as a failure of this package.
VALIDATORS: dict[str, str] = {
    "semantic_groups.tsv": "ebm.concepts.groups:MeshGroups",
    "umls_semantic_groups.tsv": "ebm.concepts.groups:UmlsGroups",
    "concept_synonyms.tsv": "ebm.concepts.matcher:validate_synonyms",
    "concept_stoplist.tsv": "ebm.concepts.matcher:validate_stoplist",
    "concept_adjectives.tsv": "ebm.concepts.matcher:validate_adjectives",
    "negation_triggers.tsv": "ebm.text.negation:load_negation_rules",
    "population_words.tsv": "extractors.population:load_population_words",
    "intervention_cues.tsv": "extractors.cues:load_weighted_cues",
    "intervention_kinds.tsv": "extractors.tree_weights:load_tree_weights",
    "problem_kinds.tsv": "extractors.tree_weights:load_tree_weights",
    "intervention_terms.tsv": "extractors.intervention:load_intervention_terms",
    "outcome_cues.tsv": "extractors.outcome_cues:read_cues",
}


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


def check_clinical_queries(t: ClinicalQueries) -> list[Problem]:
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
                store_translate(r.pubmed)
            except EbmError as exc:
                out.append(Problem(r.file, r.line, f"pubmed: the local store cannot run it: {exc}"))
        try:
            require_subset(r.subset)
        except QuerySyntaxError as exc:
            out.append(Problem(r.file, r.line, f"subset: {exc}"))
    return out


# --- whole directory ----------------------------------------------------------------------

OWN_LOADERS: dict[str, Callable[[Path, list[InputError]], Any]] = {
    "task_indicators": load_task_indicators,
    "study_types": load_study_types,
    "journals": load_journals,
    "clinical_queries": load_clinical_queries,
}


def check_loaded(name: str, table: Any, voc: Any) -> list[Problem]:
    if name == "task_indicators":
        return check_task_indicators(table, voc)
    if name == "study_types":
        return check_study_types(table, voc)
    if name == "journals":
        return check_journals(table)
    return check_clinical_queries(table)


def load_checked(
    directory: Path, voc: Any = None, verdicts: Verdicts | None = None
) -> tuple[dict[str, Any], list[Problem]]:
    """Load this package's tables from ``directory`` and validate them against ``voc`` (default:
    ``mesh()``, loaded only when a table needs validating).

    With ``verdicts``, a table that passed before (same bytes, code and MeSH data) is loaded
    without validating it again, and a table that passes is recorded.
    """
    loaded: dict[str, Any] = {}
    problems: list[Problem] = []
    for name in TABLE_FILES:
        path = table_path(directory, name)
        if not path.exists():
            problems.append(Problem(str(path), None, "table missing (copy it from the shipped rules/)"))
            continue
        key = _own_key(verdicts, path)
        errors: list[InputError] = []
        try:
            table = OWN_LOADERS[name](path, errors)
        except EbmError as exc:
            problems.append(problem_from_error(exc, path))
            continue
        loaded[name] = table
        found = [problem_from_error(e, path) for e in errors]
        # the key was taken before loading: a table edited meanwhile is validated
        if verdicts and key and not found and verdicts.passed(key) and key == _own_key(verdicts, path):
            continue
        if voc is None:
            from ebm.mesh import mesh

            voc = mesh()
        found.extend(check_loaded(name, table, voc))
        if verdicts and key and not found and key == _own_key(verdicts, path):
            verdicts.record(key)
        problems.extend(found)
    return loaded, problems


def _own_key(verdicts: Verdicts | None, path: Path) -> str | None:
    if verdicts is None:
        return None
    try:
        return verdicts.own_key(path.name, path.read_bytes())
    except OSError:
        return None


def _run_external(spec: str, path: Path) -> list[Problem] | None:
    """Problems from another module's validator; None when that module provides none."""
    module, _, attr = spec.partition(":")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return None
    try:
        result = fn(path)
    except EbmError as exc:
        return [problem_from_error(exc, path)]
    if isinstance(result, list | tuple) and result and all(isinstance(p, Problem) for p in result):
        return list(result)
    return []


def check_directory(directory: Path, vocabulary: Any = None, *, remember: bool = True) -> Report:
    """Validate every table in ``directory``: this package's and, through VALIDATORS, others'.

    With ``remember`` (and the shipped vocabulary), tables that passed before unchanged, under
    the same code and data, are not validated again (``ebm.rules.verdicts``).
    """
    verdicts = Verdicts() if remember and vocabulary is None else None
    report = Report()
    _, problems = load_checked(directory, vocabulary, verdicts)
    report.problems.extend(problems)
    own = {table_path(directory, name).name for name in TABLE_FILES}
    report.checked.extend(sorted(f for f in own if (directory / f).exists()))
    for path in sorted(directory.iterdir()):
        if path.name in own or path.suffix not in (".tsv", ".toml"):
            continue
        spec = VALIDATORS.get(path.name)
        key = verdicts.external_key(spec, path.name, directory) if verdicts and spec else None
        if verdicts and key and verdicts.passed(key):
            report.checked.append(path.name)
            continue
        found = _run_external(spec, path) if spec else None
        if found is None:
            report.unchecked.append(path.name)
        else:
            report.checked.append(path.name)
            report.problems.extend(found)
            if verdicts and key and not found and key == verdicts.external_key(spec, path.name, directory):
                verdicts.record(key)
    return report
