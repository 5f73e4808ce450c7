"""From a PICO frame to a PubMed query, relaxed step by step until enough citations come back.

The query (Demner-Fushman & Lin 2007, section 7, where a physician wrote them by hand) is

    problem AND intervention AND comparison AND population AND <Clinical Queries filter>
    AND hasabstract AND English[la] AND humans[mh]

on PubMed. The local store gets ``(... AND hasabstract) NOT (animals[mh] NOT humans[mh])``
instead of the last two limits (see ``LIMITS``: many of its records have no language or MeSH).

Each slot term becomes ``("MeSH Heading"[mh] OR "term"[tiab])`` when it names a MeSH
descriptor (``ebm.mesh.mesh().resolve``), else the MeSH entry terms found inside it, each so,
ANDed with its remaining words as ``word[tiab]``; alternatives in a slot ("wheezing / asthma",
"acetaminophen, ibuprofen") are ORed; without a primary problem the co-occurring problems
stand in. The filter is the task's Clinical Queries filter from ``rules/clinical_queries.tsv``.

Dialects: ``pubmed`` (PubMed) and ``local`` (the local store, which parses PubMed's syntax with
``ebm.query_syntax``, so it gets the same filter strings); only the limits differ.

Words are read as the store indexes them (FTS5 ``unicode61``, diacritics removed): "Guillain–Barré
syndrome" is looked up and searched as "Guillain-Barre syndrome", so its MeSH heading is found; a
slot (or an alternative in it) with nothing searchable left is reported in ``Retrieval.notes``,
never dropped silently.

``retrieve`` runs the query on any ``CitationSource``; while fewer than ``min_hits`` come back
it relaxes, cumulatively, in the order of ``LADDER``: drop the comparison, drop the population,
narrow -> broad filter, drop the filter, drop the limits, keep only the MeSH terms of each
slot (its other words stop excluding citations), drop the intervention, and last any term of
the problem, intervention or comparison (ORed: for sources that rank by relevance, as the
local store's BM25 does). The result says which relaxations were used.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ebm.errors import EbmError, InputError
from ebm.frame import Frame

if TYPE_CHECKING:
    from ebm.mesh import MeshVocabulary
    from ebm.rules import RuleSet
    from ebm.source import CitationSource, SearchResult, Sort

# --- from frame terms to clauses --------------------------------------------------------

# Words that carry no search value in a slot ("elderly patients", "drug treatment").
STOPWORDS = frozenset(
    "a an the of in on at to for with without by from and or vs versus than as into after before "
    "during who whom whose which that this these those is are be being was were its their his her".split()
)
GENERIC = frozenset(
    "patient patients people person persons subject subjects individual individuals case cases "
    "use using used treatment treatments therapy therapies effect effects efficacy effectiveness "
    "measurement measurements management outcome outcomes suspected plus alone undergoing "
    "receiving compared year years old older younger month months week weeks day days".split()
)
MAX_NGRAM = 6
# a word: letters or digits of any script, with inner apostrophes and hyphens ("Crohn's")
_WORD = re.compile(r"[^\W_](?:[^\W_]|['\-])*")
_ALTERNATIVES = re.compile(r"\s*(?:/|,|;|\bor\b)\s*", re.IGNORECASE)
_FOLD = str.maketrans(
    {**dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
     **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u00b4\u0060", "'"),
     **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"')}
)  # fmt: skip


def fold(text: str) -> str:
    """Text as the store's tokenizer reads it (FTS5 unicode61, remove_diacritics): accents of
    Latin letters removed ("Barré" -> "Barre", "Sjögren" -> "Sjogren"), typographic dashes and
    quotes made plain; other scripts as written (the tokenizer keeps them so)."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFD", text.translate(_FOLD)):
        if unicodedata.combining(ch) and out and out[-1] < "\u0250":
            continue  # a mark on a Latin letter
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


@dataclass(frozen=True)
class Unit:
    """One searchable piece of a slot: a MeSH descriptor found in it, or a leftover word."""

    text: str  # the words as the frame gives them
    descriptor: str | None = None  # MeSH preferred name

    def clause(self) -> str:
        words = _tiab(self.text)
        if self.descriptor is None:
            return words
        parts = [f'"{self.descriptor}"[mh]', words]
        name = self.descriptor.casefold()
        # The heading's own name as text too, when it reads as ordinary words (unindexed records).
        if name != self.text.casefold() and re.fullmatch(r"[a-z0-9][a-z0-9 '\-]*", name):
            parts.append(_tiab(name))
        return "(" + " OR ".join(parts) + ")"


def _tiab(text: str) -> str:
    t = text.replace('"', " ").strip()
    if re.fullmatch(r"[^\W_]+", t):
        return f"{t}[tiab]"
    return f'"{" ".join(t.split())}"[tiab]'


def alternatives(text: str) -> list[str]:
    """Slot text split into alternatives: 'wheezing / asthma' -> ['wheezing', 'asthma']
    (folded: see ``fold``)."""
    return [a for a in (s.strip() for s in _ALTERNATIVES.split(fold(text))) if a]


def units(text: str, vocabulary: MeshVocabulary) -> list[Unit]:
    """The MeSH descriptors named in ``text`` (longest entry terms first) and its other words."""
    text = fold(text)
    whole = " ".join(_WORD.findall(text))
    if not whole:
        return []
    d = vocabulary.resolve(whole)
    if d is not None:
        return [Unit(whole, d.name)]
    tokens = _WORD.findall(text)
    out: list[Unit] = []
    i = 0
    while i < len(tokens):
        for size in range(min(MAX_NGRAM, len(tokens) - i), 0, -1):
            piece = tokens[i : i + size]
            if size == 1 and (piece[0].casefold() in STOPWORDS | GENERIC or len(piece[0]) < 3):
                continue
            if piece[0].isdigit() or piece[-1].isdigit():
                continue
            if piece[0].casefold() in STOPWORDS or piece[-1].casefold() in STOPWORDS:
                continue
            phrase = " ".join(piece)
            uis = vocabulary.term_index.get(phrase.casefold())
            if uis:
                out.append(Unit(phrase, vocabulary.descriptors[uis[0]].name))
                i += size
                break
        else:
            word = tokens[i]
            if word.casefold() not in STOPWORDS | GENERIC and not word.isdigit():
                out.append(Unit(word))
            i += 1
    return out


def slot_clause(texts: tuple[str, ...], vocabulary: MeshVocabulary, mesh_only: bool = False) -> str | None:
    """One slot as a clause: alternatives ORed, the units of each ANDed.

    ``mesh_only`` keeps only the units that are MeSH descriptors when an alternative has any
    ("suspected acute appendicitis" -> Appendicitis), so stray words stop excluding citations.
    """
    alts: list[str] = []
    for text in texts:
        for alt in alternatives(text):
            us = units(alt, vocabulary)
            if mesh_only:
                us = [u for u in us if u.descriptor] or us
            if not us:
                continue
            clause = " AND ".join(u.clause() for u in us)
            if len(us) > 1:
                clause = f"({clause})"
            if clause not in alts:
                alts.append(clause)
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


def unsearchable(frame: Frame, vocabulary: MeshVocabulary) -> tuple[str, ...]:
    """A note for each slot text, or alternative in it, that leaves nothing to search (only
    stop words, generic words, numbers or punctuation): the query goes on without it."""
    notes: list[str] = []
    slots = [("problem", (frame.problem,) if frame.problem else frame.co_problems)]
    slots += [(name, getattr(frame, name)) for name in ("intervention", "comparison", "population")]
    for name, value in slots:
        texts = (value,) if isinstance(value, str) else tuple(value or ())
        for text in texts:
            for alt in _ALTERNATIVES.split(text):
                if alt.strip() and not units(alt, vocabulary):
                    notes.append(f"{name} {alt.strip()!r} has no searchable word: left out of the query")
    return tuple(notes)


# --- plans and relaxation ---------------------------------------------------------------

# Limits the paper always applied (section 7): abstracts, English, humans. The local store
# holds many records without language or MeSH (in-process MEDLINE records, PubMedQA,
# PICO-data, ...), which English[la] and humans[mh] would exclude: there the humans limit
# takes PubMed's unknown-tolerant form (drop animal-only records) and language is left to
# the answer.
DIALECTS = ("pubmed", "local")
LIMITS: dict[str, tuple[str, ...]] = {
    "pubmed": ("hasabstract", "English[la]", "humans[mh]"),
    "local": ("hasabstract",),
}
EXCLUDE: dict[str, str | None] = {
    "pubmed": None,
    "local": "(animals[mh] NOT humans[mh])",
}


@dataclass(frozen=True)
class Settings:
    """What a query includes; the ladder relaxes these one at a time."""

    comparison: bool = True
    population: bool = True
    intervention: bool = True
    scope: str | None = "narrow"  # Clinical Queries filter scope, None: no filter
    limits: bool = True
    mesh_only: bool = False
    any_term: bool = False  # OR every term of problem, intervention and comparison


# (name, change): applied cumulatively, in this order, while too few citations come back.
LADDER: tuple[tuple[str, dict[str, object]], ...] = (
    ("drop comparison", {"comparison": False}),
    ("drop population", {"population": False}),
    ("broad filter", {"scope": "broad"}),
    ("drop filter", {"scope": None}),
    ("drop limits", {"limits": False}),
    ("MeSH terms only", {"mesh_only": True}),
    ("drop intervention", {"intervention": False}),
    ("any term", {"any_term": True}),
)


def _and(parts: list[str]) -> str:
    def wrap(p: str) -> str:
        if p.startswith("(") and _balanced_outer(p):
            return p
        return f"({p})" if " OR " in p or " NOT " in p else p

    return " AND ".join(wrap(p) for p in parts)


def _balanced_outer(p: str) -> bool:
    """True when the opening '(' closes at the very end (the whole string is one group)."""
    depth = 0
    in_quote = False
    for i, c in enumerate(p):
        if c == '"':
            in_quote = not in_quote
        elif not in_quote and c == "(":
            depth += 1
        elif not in_quote and c == ")":
            depth -= 1
            if depth == 0 and i < len(p) - 1:
                return False
    return depth == 0


def build_query(
    frame: Frame,
    settings: Settings = Settings(),
    *,
    rules: RuleSet,
    dialect: str = "local",
    vocabulary: MeshVocabulary,
) -> str | None:
    """The query for ``frame`` under ``settings``; None when no slot is left to search
    (``rules``, ``vocabulary``: from ``ebm.resources.Resources``)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r} (one of {', '.join(DIALECTS)})")
    if settings.any_term:
        return any_term_query(frame, vocabulary)
    slots: list[str] = []
    wanted = [("problem", True), ("intervention", settings.intervention)]
    wanted += [("comparison", settings.comparison), ("population", settings.population)]
    for name, keep in wanted:
        if not keep:
            continue
        value = getattr(frame, name)
        if name == "problem" and not value:
            value = frame.co_problems  # no primary problem: search the co-occurring ones
        texts = (value,) if isinstance(value, str) else tuple(value or ())
        clause = slot_clause(texts, vocabulary, settings.mesh_only)
        if clause:
            slots.append(clause)
    if not slots:
        return None
    parts = list(slots)
    if settings.scope:
        f = rules.clinical_queries.filter(frame.task.value, settings.scope, dialect)
        if f:
            parts.append(f)
    if settings.limits:
        parts.extend(LIMITS[dialect])
        if EXCLUDE[dialect]:
            return f"({_and(parts)}) NOT {EXCLUDE[dialect]}"
    return _and(parts)


def any_term_query(frame: Frame, vocabulary: MeshVocabulary) -> str | None:
    """The loosest query: any MeSH term or word of the problem, intervention or comparison.

    Meant for a source that ranks by relevance (the local store's BM25, PubMed's Best Match),
    as the benchmark pools were built; population words ("children") are left out, they
    would match nearly everything.
    """
    texts = [frame.problem] if frame.problem else list(frame.co_problems)
    texts += [*frame.intervention, *frame.comparison]
    clauses: list[str] = []
    for text in texts:
        for alt in alternatives(text):
            for u in units(alt, vocabulary):
                c = u.clause()
                if c not in clauses:
                    clauses.append(c)
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else "(" + " OR ".join(clauses) + ")"


def formulate(
    frame: Frame,
    *,
    rules: RuleSet,
    dialect: str = "local",
    vocabulary: MeshVocabulary,
) -> str:
    """The first, strictest query for ``frame``."""
    q = build_query(frame, rules=rules, dialect=dialect, vocabulary=vocabulary)
    if q is None:
        raise InputError(_nothing_to_search(frame))
    return q


def ladder(
    frame: Frame,
    *,
    rules: RuleSet,
    dialect: str = "local",
    vocabulary: MeshVocabulary,
) -> list[tuple[str, tuple[str, ...]]]:
    """(query, relaxations used) from strictest to loosest; steps that change nothing are skipped."""
    settings = Settings()
    first = build_query(frame, settings, rules=rules, dialect=dialect, vocabulary=vocabulary)
    if first is None:
        raise InputError(_nothing_to_search(frame))
    out: list[tuple[str, tuple[str, ...]]] = [(first, ())]
    used: tuple[str, ...] = ()
    for name, change in LADDER:
        candidate = replace(settings, **change)  # type: ignore[arg-type]
        q = build_query(frame, candidate, rules=rules, dialect=dialect, vocabulary=vocabulary)
        if q is None or q == out[-1][0]:
            continue  # nothing to drop here, or it would leave nothing to search
        settings = candidate
        used = used + (name,)
        out.append((q, used))
    return out


def _nothing_to_search(frame: Frame) -> str:
    given = [
        f"{n} {v!r}"
        for n in ("problem", "intervention", "comparison", "population")
        if (v := getattr(frame, n))
    ]
    what = f" ({'; '.join(given)}: only stop words, generic words or numbers)" if given else ""
    return f"the frame has nothing to search for{what}: give a problem or an intervention"


@dataclass(frozen=True)
class Attempt:
    query: str
    relaxations: tuple[str, ...]
    count: int  # hits; 0 when the source refused the query
    error: str | None = None  # the source's message when it refused the query


@dataclass(frozen=True)
class Retrieval:
    query: str  # the query whose result is kept
    relaxations: tuple[str, ...]  # the relaxations it needed, in order ("drop comparison", ...)
    result: SearchResult
    attempts: tuple[Attempt, ...]  # every query run, in order, with its hit count
    notes: tuple[str, ...] = ()  # parts of the frame the query could not search (``unsearchable``)


def retrieve(
    frame: Frame,
    source: CitationSource,
    min_hits: int = 20,
    limit: int = 50,
    *,
    rules: RuleSet,
    sort: Sort = "relevance",
    vocabulary: MeshVocabulary,
    dialect: str | None = None,
) -> Retrieval:
    """Search ``source`` for ``frame``, relaxing the query until ``min_hits`` citations come back.

    ``dialect`` defaults to the source's name ("pubmed" or "local"). When even the loosest
    query finds fewer than ``min_hits``, the attempt with the most hits is kept (the least
    relaxed among equals). A query the source refuses (``EbmError``) is recorded in
    ``attempts`` and the ladder goes on; if every query is refused, the last refusal is raised.
    A source that cannot be reached or answers too late (``SourceUnavailable``) or the
    question's deadline stops the ladder at once.
    """
    if dialect is None:
        dialect = "pubmed" if getattr(source, "name", "") == "pubmed" else "local"
    attempts: list[Attempt] = []
    best: tuple[int, str, tuple[str, ...], SearchResult] | None = None
    refused: EbmError | None = None
    from ebm.source import SourceUnavailable, check_deadline

    for query, relaxations in ladder(frame, rules=rules, dialect=dialect, vocabulary=vocabulary):
        check_deadline(f"query {len(attempts) + 1} ({query[:80]})")
        try:
            result = source.search(query, limit=limit, sort=sort)
        except SourceUnavailable:  # unreachable or out of time: a looser query would be too
            raise
        except EbmError as exc:  # a source limit on one query: the looser ones may still run
            attempts.append(Attempt(query, relaxations, 0, str(exc)))
            refused = exc
            continue
        attempts.append(Attempt(query, relaxations, result.count))
        if best is None or result.count > best[0]:
            best = (result.count, query, relaxations, result)
        if result.count >= min_hits:
            break
    if best is None:
        assert refused is not None
        raise refused
    _, query, relaxations, result = best
    return Retrieval(query, relaxations, result, tuple(attempts), unsearchable(frame, vocabulary))
