"""The typed rule tables of ``rules/`` and the lookups the scorer and query formulator use.

* ``task_indicators.tsv`` -> ``TaskIndicators``: per clinical task, MeSH descriptors, trees and
  qualifiers with a weight for main-theme and other headings (S_task, paper section 6.3).
  ``TaskIndicators.weights(task)`` compiles one task against MeSH; ``TaskWeights.hits(headings)``
  lists every weighted term of a citation with the row that gave its weight.
* ``study_types.tsv`` -> ``StudyTypes``: publication types / study-design headings -> S_study
  and evidence grade (section 6.2, Table 5); ``StudyTypes.classify(citation)``.
* ``journals.tsv`` -> ``Journals``: core clinical journals -> S_journal; ``Journals.match``.
* ``clinical_queries.tsv`` -> ``ClinicalQueries``: the PubMed Clinical Queries filters per
  category and scope, as PubMed takes them and translated into the minimal query subset.

Tables load without MeSH (``load_*``); ``ebm.resources.Resources.load`` validates them against MeSH
(``ebm.rules.check``) before use, so the compiling code below can assume valid names.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ebm.errors import InputError
from ebm.rules import qualifiers as quals
from ebm.rules.table import Table, choice, load, number, text

if TYPE_CHECKING:
    from ebm.citation import Citation, Journal, MeshHeading
    from ebm.mesh import MeshVocabulary


class _Located:
    """A record read from a table row; ``where`` ("file:line") names the row in messages."""

    file: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


# --- task indicators --------------------------------------------------------------------

INDICATOR_TASKS = ("therapy", "prevention", "diagnosis", "prognosis", "etiology", "all")
KINDS = ("descriptor", "explode", "tree", "qualifier", "task")
# A task that uses another task's rows as its own (below its own rows in precedence).
INHERITS: dict[str, tuple[str, ...]] = {"prevention": ("therapy",)}
# Frame tasks (ebm.frame.Task values) -> indicator task.
FRAME_TASKS: dict[str, str] = {
    "therapy": "therapy",
    "prevention": "prevention",
    "differential diagnosis": "diagnosis",
    "diagnostic test": "diagnosis",
    "prognosis": "prognosis",
    "etiology": "etiology",
}

TASK_INDICATOR_COLUMNS = (
    choice("task", INDICATOR_TASKS, help="the clinical task"),
    choice("kind", KINDS, help="descriptor, explode, tree, qualifier or task"),
    text("term", help="a MeSH name or UI, tree number, qualifier or task"),
    number("major", help="weight for a main-theme heading"),
    number("minor", help="weight for any other heading"),
)

TREE_NUMBER = re.compile(r"^[A-Z]\d{2}(\.\d{3})*$")


@dataclass(frozen=True)
class Indicator(_Located):
    task: str
    kind: str
    term: str
    major: float
    minor: float
    file: str
    line: int
    comment: str | None = None


@dataclass(frozen=True)
class TaskHit:
    """One weighted MeSH term of a citation: what matched, its weight and the deciding row."""

    term: str  # "Fever" or "Fever/drug therapy" (a qualifier is shown on its heading)
    kind: str  # "descriptor" or "qualifier"
    major: bool
    weight: float
    indicator: Indicator  # the row that gave the weight
    via: Indicator | None = None  # for a 'task' row: the other task's row that matched the term


@dataclass(frozen=True)
class _Rule:
    rank: tuple[int, int, int]  # (precedence level, -specificity, line): lower wins
    indicator: Indicator
    via: Indicator | None


@dataclass
class TaskWeights:
    """One task's indicators compiled against MeSH: descriptor UI / qualifier name -> rule."""

    task: str
    descriptors: dict[str, _Rule] = field(default_factory=dict)
    qualifiers: dict[str, _Rule] = field(default_factory=dict)

    def hits(self, headings: Iterable[MeshHeading] | None, vocabulary: MeshVocabulary) -> list[TaskHit]:
        """Every MeSH term of ``headings`` that has a weight for this task (zero weights included)."""
        out: list[TaskHit] = []
        for h in headings or ():
            ui = h.descriptor_ui
            if not ui:
                d = vocabulary.by_name(h.descriptor_name)
                ui = d.ui if d else None
            rule = self.descriptors.get(ui) if ui else None
            if rule:
                major = h.is_major
                w = rule.indicator.major if major else rule.indicator.minor
                out.append(TaskHit(h.descriptor_name, "descriptor", major, w, rule.indicator, rule.via))
            for q in h.qualifiers:
                name = quals.canonical(q.name) or quals.normalize(q.name)
                rule = self.qualifiers.get(name)
                if rule:
                    w = rule.indicator.major if q.major else rule.indicator.minor
                    term = f"{h.descriptor_name}/{q.name}"
                    out.append(TaskHit(term, "qualifier", q.major, w, rule.indicator, rule.via))
        return out

    def score(self, headings: Iterable[MeshHeading] | None, vocabulary: MeshVocabulary) -> float:
        return sum((h.weight for h in self.hits(headings, vocabulary)), 0.0)


@dataclass
class TaskIndicators:
    table: Table
    rows: list[Indicator]
    _compiled: dict[tuple[str, int], TaskWeights] = field(default_factory=dict, repr=False)

    def weights(self, task: str, vocabulary: MeshVocabulary) -> TaskWeights:
        """The compiled weights of an indicator task or frame task ("diagnostic test" -> diagnosis)."""
        t = FRAME_TASKS.get(task, task)
        if t not in INDICATOR_TASKS or t == "all":
            raise ValueError(f"not a task: {task!r}")
        voc = vocabulary
        key = (t, id(voc))
        if key not in self._compiled:
            self._compiled[key] = self._compile(t, voc)
        return self._compiled[key]

    def _compile(self, task: str, voc: MeshVocabulary) -> TaskWeights:
        # Precedence levels: own rows 0, inherited 1, own task references 2, inherited task
        # references 3, 'all' rows 4.
        levels: list[tuple[int, Indicator]] = []
        inherited = INHERITS.get(task, ())
        for r in self.rows:
            if r.task == task:
                levels.append((2 if r.kind == "task" else 0, r))
            elif r.task in inherited:
                levels.append((3 if r.kind == "task" else 1, r))
            elif r.task == "all":
                levels.append((4, r))
        out = TaskWeights(task)
        for level, r in levels:
            if r.kind == "task":
                for target in self.rows:
                    # the other task's own positive rows (not its references): no cycles
                    if target.task == r.term and target.kind != "task" and target.major > 0:
                        self._add(out, voc, level, target, weights=r, via=target)
            else:
                self._add(out, voc, level, r, weights=r, via=None)
        return out

    @staticmethod
    def _add(
        out: TaskWeights,
        voc: MeshVocabulary,
        level: int,
        match: Indicator,
        weights: Indicator,
        via: Indicator | None,
    ) -> None:
        if match.kind == "qualifier":
            name = quals.canonical(match.term)
            if name:
                _keep(out.qualifiers, name, _Rule((level, 0, weights.line), weights, via))
            return
        for ui, specificity in _expand(match, voc):
            _keep(out.descriptors, ui, _Rule((level, -specificity, weights.line), weights, via))


def _keep(table: dict[str, _Rule], key: str, rule: _Rule) -> None:
    old = table.get(key)
    if old is None or rule.rank < old.rank:
        table[key] = rule


def _expand(r: Indicator, voc: MeshVocabulary) -> list[tuple[str, int]]:
    """(descriptor UI, specificity) pairs a descriptor/explode/tree row covers."""
    if r.kind == "tree":
        depth = r.term.count(".") + 1
        return [(ui, depth) for ui in voc.tree_descendants(r.term)]
    d = resolve_descriptor(r.term, voc)
    if d is None:
        return []
    if r.kind == "descriptor":
        return [(d.ui, 100)]
    depth = min((t.count(".") + 1 for t in d.tree_numbers), default=1)
    return [(ui, depth) for ui in voc.explode(d.ui)]


def resolve_descriptor(term: str, voc: MeshVocabulary):  # -> Descriptor | None
    """A descriptor by UI or preferred name (not entry terms: rules name descriptors exactly)."""
    t = term.strip()
    return voc.get(t) or voc.by_name(t)


def load_task_indicators(path: Path, errors: list[InputError] | None = None) -> TaskIndicators:
    return task_indicators_from_table(load(path, TASK_INDICATOR_COLUMNS, errors))


def task_indicators_from_table(table: Table) -> TaskIndicators:
    rows = [
        Indicator(r["task"], r["kind"], r["term"], r["major"], r["minor"], str(table.path), r.line, r.comment)
        for r in table
    ]
    return TaskIndicators(table, rows)


# --- study types ------------------------------------------------------------------------

STUDY_FIELDS = ("pt", "mh")
STUDY_CLASSES = ("clinical trial", "observational", "non-clinical", "synthesis", "other")
GRADES = ("A", "B", "C")

STUDY_TYPE_COLUMNS = (
    choice("field", STUDY_FIELDS, help="pt (publication type) or mh (MeSH heading)"),
    text("term", help="a MeSH name or UI"),
    choice("class", STUDY_CLASSES, help="the study class"),
    number("s_study", required=False, help="S_study, or empty"),
    choice("grade", GRADES, required=False, help="A, B, C or empty"),
    text("unless", required=False, help="a MeSH heading that disables the row"),
)


@dataclass(frozen=True)
class StudyType(_Located):
    field: str
    term: str
    study_class: str
    s_study: float | None
    grade: str | None
    unless: str | None
    file: str
    line: int
    comment: str | None = None


@dataclass(frozen=True)
class StudyEvidence:
    """What the study-type table says about one citation."""

    s_study: float
    grade: str | None
    study_row: StudyType | None  # the row that gave S_study
    grade_row: StudyType | None  # the row that gave the grade

    @property
    def study_class(self) -> str | None:
        return self.study_row.study_class if self.study_row else None


@dataclass
class StudyTypes:
    table: Table
    rows: list[StudyType]

    def classify(self, citation: Citation, vocabulary: MeshVocabulary) -> StudyEvidence:
        voc = vocabulary
        pts = _keys((p.ui, p.name) for p in citation.publication_types or ())
        mhs = _keys((h.descriptor_ui, h.descriptor_name) for h in citation.mesh_headings or ())
        s_row = g_row = None
        for r in self.rows:
            if (s_row and g_row) or not _has(pts if r.field == "pt" else mhs, r.term, voc):
                continue
            if r.unless and _has(mhs, r.unless, voc):
                continue
            if s_row is None and r.s_study is not None:
                s_row = r
            if g_row is None and r.grade is not None:
                g_row = r
        return StudyEvidence(
            s_row.s_study if s_row and s_row.s_study is not None else 0.0,
            g_row.grade if g_row else None,
            s_row,
            g_row,
        )


def _keys(pairs: Iterable[tuple[str | None, str]]) -> set[str]:
    out: set[str] = set()
    for ui, name in pairs:
        if ui:
            out.add(ui)
        out.add(name.casefold())
    return out


def _has(keys: set[str], term: str, voc: MeshVocabulary) -> bool:
    d = resolve_descriptor(term, voc)
    if d is not None:
        return d.ui in keys or d.name.casefold() in keys
    return term.casefold() in keys


def load_study_types(path: Path, errors: list[InputError] | None = None) -> StudyTypes:
    return study_types_from_table(load(path, STUDY_TYPE_COLUMNS, errors))


def study_types_from_table(table: Table) -> StudyTypes:
    rows = [
        StudyType(
            r["field"],
            r["term"],
            r["class"],
            r["s_study"],
            r["grade"],
            r["unless"] or None,
            str(table.path),
            r.line,
            r.comment,
        )
        for r in table
    ]
    return StudyTypes(table, rows)


# --- journals ---------------------------------------------------------------------------

JOURNAL_COLUMNS = (
    text("title", help="the journal title"),
    text("medline_ta", required=False, help="NLM title abbreviation"),
    number("s_journal", help="S_journal"),
)


@dataclass(frozen=True)
class CoreJournal(_Located):
    title: str
    medline_ta: str | None
    s_journal: float
    file: str
    line: int


def journal_keys(name: str) -> tuple[str, str]:
    """Comparison keys of a journal name: (the whole name, its main title), normalised.

    The main title drops a subtitle after ":" ";" " / " or "(": "JAMA : the journal of the
    American Medical Association" -> "jama", "Lancet (London, England)" -> "lancet".
    """
    main = re.split(r"\s*:\s|;|\s/\s|\(", name, maxsplit=1)[0]
    return _norm_journal(name), _norm_journal(main)


def _norm_journal(s: str) -> str:
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    s = s.casefold().replace("&", " and ")
    s = re.sub(r"[^a-z0-9]+", " ", s).strip()
    s = re.sub(r"^the ", "", s)
    return s


@dataclass
class Journals:
    table: Table
    rows: list[CoreJournal]
    _full: dict[str, CoreJournal] = field(default_factory=dict, repr=False)
    _main: dict[str, CoreJournal] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for r in self.rows:
            full, main = journal_keys(r.title)
            self._full.setdefault(full, r)
            if r.medline_ta:
                self._full.setdefault(_norm_journal(r.medline_ta), r)
            if main:
                self._main.setdefault(main, r)

    def match(self, journal: Journal | None) -> CoreJournal | None:
        """The table row for a citation's journal, by MedlineTA, ISO abbreviation or title."""
        if journal is None:
            return None
        names = [journal.medline_ta, journal.iso_abbreviation, journal.title]
        for name in names:
            if name and (r := self._full.get(_norm_journal(name))):
                return r
        if journal.title:
            full, main = journal_keys(journal.title)
            for k in (main, full):
                if k and (r := self._full.get(k) or self._main.get(k)):
                    return r
        return None

    def score(self, journal: Journal | None) -> float:
        r = self.match(journal)
        return r.s_journal if r else 0.0


def load_journals(path: Path, errors: list[InputError] | None = None) -> Journals:
    return journals_from_table(load(path, JOURNAL_COLUMNS, errors))


def journals_from_table(table: Table) -> Journals:
    rows = [
        CoreJournal(r["title"], r["medline_ta"] or None, r["s_journal"], str(table.path), r.line)
        for r in table
    ]
    return Journals(table, rows)


# --- clinical queries -------------------------------------------------------------------

FILTER_CATEGORIES = ("therapy", "diagnosis", "etiology", "prognosis", "clinical_prediction_guides")
SCOPES = ("broad", "narrow")
# Frame task -> Clinical Queries category: the indicator task of FRAME_TASKS, but no category
# exists for prevention or differential diagnosis: prevention questions are answered by trials,
# differential diagnosis (already "diagnosis" there) by the diagnosis studies.
FILTER_FOR_TASK: dict[str, str] = {**FRAME_TASKS, "prevention": "therapy"}

CLINICAL_QUERY_COLUMNS = (
    choice("category", FILTER_CATEGORIES, help="the Clinical Queries category"),
    choice("scope", SCOPES, help="broad or narrow"),
    text("pubmed", help="the filter as PubMed takes it"),
    text("subset", help="the same filter in the minimal query subset"),
    text("source", help="where the PubMed string comes from"),
)


@dataclass(frozen=True)
class ClinicalQuery(_Located):
    category: str
    scope: str
    pubmed: str  # PubMed's syntax (PubMed and the local store take it)
    subset: str  # the minimal subset (ebm.query_syntax.require_subset checks it)
    source: str
    file: str
    line: int
    comment: str | None = None


@dataclass
class ClinicalQueries:
    table: Table
    rows: list[ClinicalQuery]

    def get(self, category: str, scope: str) -> ClinicalQuery | None:
        c = FILTER_FOR_TASK.get(category, category)
        return next((r for r in self.rows if r.category == c and r.scope == scope), None)

    def filter(self, task: str, scope: str, dialect: str = "pubmed") -> str | None:
        """The filter for a frame task or category: PubMed's string, or with ``dialect="subset"``
        its translation into the minimal query subset."""
        r = self.get(task, scope)
        if r is None:
            return None
        return r.subset if dialect == "subset" else r.pubmed


def load_clinical_queries(path: Path, errors: list[InputError] | None = None) -> ClinicalQueries:
    return clinical_queries_from_table(load(path, CLINICAL_QUERY_COLUMNS, errors))


def clinical_queries_from_table(table: Table) -> ClinicalQueries:
    rows = [
        ClinicalQuery(
            r["category"],
            r["scope"],
            r["pubmed"],
            r["subset"],
            r["source"],
            str(table.path),
            r.line,
            r.comment,
        )
        for r in table
    ]
    return ClinicalQueries(table, rows)


# --- the set --------------------------------------------------------------------------------

@dataclass
class RuleSet:
    """The four scoring and query tables of one rules directory (``Resources.rules``)."""

    directory: Path
    task_indicators: TaskIndicators
    study_types: StudyTypes
    journals: Journals
    clinical_queries: ClinicalQueries
