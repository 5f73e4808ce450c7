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

Dialects: ``pubmed`` (PubMed), ``local`` (the local store, which parses PubMed's syntax, so it
gets the same filter strings) and ``subset``: only AND/OR/NOT, parentheses, quoted phrases,
the tags [ti] [tiab] [mh] [majr] [pt] [la], ``hasabstract`` and ``2000:2010[dp]`` (no
truncation, no subheadings), checked by ``parse_query``, for sources that take no more. The
frame terms and limits are inside the subset in every dialect; only the filters differ.

``retrieve`` runs the query on any ``CitationSource``; while fewer than ``min_hits`` come back
it relaxes, cumulatively, in the order of ``LADDER``: drop the comparison, drop the population,
narrow -> broad filter, drop the filter, drop the limits, keep only the MeSH terms of each
slot (its other words stop excluding citations), drop the intervention, and last any term of
the problem, intervention or comparison (ORed: for sources that rank by relevance, as the
local store's BM25 does). The result says which relaxations were used.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ebm.errors import EbmError, InputError
from ebm.frame import Frame

if TYPE_CHECKING:
    from ebm.mesh import MeshVocabulary
    from ebm.rules import RuleSet
    from ebm.source import CitationSource, SearchResult, Sort

# --- the query subset -------------------------------------------------------------------

TAGS = ("ti", "tiab", "mh", "majr", "pt", "la", "dp")
# PubMed's long field names -> the subset's short tag (None: not in the subset).
LONG_TAGS: dict[str, str | None] = {
    "title": "ti",
    "title/abstract": "tiab",
    "text word": None,
    "tw": None,
    "mesh terms": "mh",
    "mesh": "mh",
    "mesh major topic": "majr",
    "publication type": "pt",
    "language": "la",
    "lang": "la",
    "date - publication": "dp",
    "pdat": "dp",
    "subheading": None,
    "sh": None,
    "mesh subheading": None,
    "mesh:noexp": None,
}
OPERATORS = ("AND", "OR", "NOT")


class QuerySyntaxError(InputError):
    """A query outside the supported subset; the message names the part."""


@dataclass(frozen=True)
class Term:
    text: str  # as written, without quotes
    tag: str | None  # one of TAGS, or None (untagged)
    phrase: bool = False


@dataclass(frozen=True)
class HasAbstract:
    pass


@dataclass(frozen=True)
class Years:
    start: int
    end: int


@dataclass(frozen=True)
class And:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Not:
    include: Node
    exclude: Node


Node = Term | HasAbstract | Years | And | Or | Not

_YEARS = re.compile(r"^(\d{4})(?::(\d{4}))?$")


def _tokens(query: str) -> Iterator[tuple[str, str, str | None, int]]:
    """(kind, text, tag, position); kinds: '(', ')', 'op', 'word', 'phrase'."""
    i, n = 0, len(query)
    while i < n:
        c = query[i]
        if c.isspace():
            i += 1
            continue
        if c in "()":
            yield c, c, None, i
            i += 1
            continue
        start = i
        if c == '"':
            j = query.find('"', i + 1)
            if j < 0:
                raise QuerySyntaxError(f"unclosed quote at character {i + 1} of {query!r}")
            kind, text, i = "phrase", query[i + 1 : j], j + 1
        elif c in "[]":
            raise QuerySyntaxError(f"unexpected {c!r} at character {i + 1} of {query!r}")
        else:
            m = re.compile(r'[^\s()"\[\]]+').match(query, i)
            assert m is not None
            kind, text, i = "word", m.group(0), m.end()
        tag = None
        k = i
        while k < n and query[k] == " ":
            k += 1
        if k < n and query[k] == "[":
            j = query.find("]", k)
            if j < 0:
                raise QuerySyntaxError(f"unclosed '[' at character {k + 1} of {query!r}")
            tag, i = query[k + 1 : j].strip(), j + 1
        if kind == "word" and tag is None and text in OPERATORS:
            yield "op", text, None, start
        else:
            yield kind, text, tag, start


def _merged(tokens: list[tuple[str, str, str | None, int]]) -> list[tuple[str, str, str | None, int]]:
    """An unquoted run of words before a field tag is one term, as in PubMed:
    ``randomized controlled trial[pt]`` is the publication type, not three words."""
    out: list[tuple[str, str, str | None, int]] = []
    run: list[tuple[str, str, str | None, int]] = []
    for tok in tokens:
        if tok[0] == "word" and tok[2] is None:
            run.append(tok)
            continue
        if tok[0] == "word" and tok[2] is not None and run:
            text = " ".join(t[1] for t in run) + " " + tok[1]
            out.append(("phrase", text, tok[2], run[0][3]))
        else:
            out.extend(run)
            out.append(tok)
        run = []
    out.extend(run)
    return out


def _term(kind: str, text: str, tag: str | None, pos: int, query: str) -> Node:
    where = f"at character {pos + 1}"
    if tag is not None:
        t = tag.casefold()
        if t not in TAGS:
            short = LONG_TAGS.get(t, "")
            hint = f"; write [{short}]" if short else ""
            raise QuerySyntaxError(
                f"field tag [{tag}] {where} is not in the query subset "
                f"({' '.join(f'[{x}]' for x in TAGS)}){hint}"
            )
        tag = t
    if kind == "word":
        if text.casefold() == "hasabstract" and tag is None:
            return HasAbstract()
        m = _YEARS.match(text)
        if m and tag == "dp":
            return Years(int(m.group(1)), int(m.group(2) or m.group(1)))
        if "*" in text:
            raise QuerySyntaxError(f"truncation ({text}) {where} is not supported: list the words")
    if tag == "dp":
        raise QuerySyntaxError(f"[dp] {where} takes a year or a year range (2000:2010[dp])")
    if not text.strip():
        raise QuerySyntaxError(f"empty phrase {where}")
    return Term(text.strip(), tag, kind == "phrase")


def parse_query(query: str) -> Node:
    """Parse a query in the supported subset (PubMed semantics: operators left to right)."""
    toks = _merged(list(_tokens(query)))
    if not toks:
        raise QuerySyntaxError("empty query")
    pos = 0

    def primary() -> Node:
        nonlocal pos
        if pos >= len(toks):
            raise QuerySyntaxError(f"query ends where a term was expected: {query!r}")
        kind, text, tag, at = toks[pos]
        pos += 1
        if kind == "(":
            node = expr()
            if pos >= len(toks) or toks[pos][0] != ")":
                raise QuerySyntaxError(f"unclosed '(' at character {at + 1} of {query!r}")
            pos += 1
            return node
        if kind in (")", "op"):
            raise QuerySyntaxError(f"unexpected {text!r} at character {at + 1} of {query!r}")
        return _term(kind, text, tag, at, query)

    def expr() -> Node:
        nonlocal pos
        node = primary()
        while pos < len(toks) and toks[pos][0] != ")":
            kind, text, _, _ = toks[pos]
            op = "AND"
            if kind == "op":
                op = text
                pos += 1
            rhs = primary()
            node = _combine(op, node, rhs)
        return node

    node = expr()
    if pos < len(toks):
        raise QuerySyntaxError(f"unmatched ')' at character {toks[pos][3] + 1} of {query!r}")
    return node


def _combine(op: str, left: Node, right: Node) -> Node:
    if op == "NOT":
        return Not(left, right)
    cls = And if op == "AND" else Or
    items = (left.items if isinstance(left, cls) else (left,)) + (
        right.items if isinstance(right, cls) else (right,)
    )
    return cls(items)


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
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")
_ALTERNATIVES = re.compile(r"\s*(?:/|,|;|\bor\b)\s*", re.IGNORECASE)


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
    if re.fullmatch(r"[A-Za-z0-9]+", t):
        return f"{t}[tiab]"
    return f'"{" ".join(t.split())}"[tiab]'


def alternatives(text: str) -> list[str]:
    """Slot text split into alternatives: 'wheezing / asthma' -> ['wheezing', 'asthma']."""
    return [a for a in (s.strip() for s in _ALTERNATIVES.split(text)) if a]


def units(text: str, vocabulary: MeshVocabulary) -> list[Unit]:
    """The MeSH descriptors named in ``text`` (longest entry terms first) and its other words."""
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


# --- plans and relaxation ---------------------------------------------------------------

# Limits the paper always applied (section 7): abstracts, English, humans. The local store
# holds many records without language or MeSH (in-process MEDLINE records, PubMedQA,
# PICO-data, ...), which English[la] and humans[mh] would exclude: there the humans limit
# takes PubMed's unknown-tolerant form (drop animal-only records) and language is left to
# the answer.
DIALECTS = ("pubmed", "local", "subset")
LIMITS: dict[str, tuple[str, ...]] = {
    "pubmed": ("hasabstract", "English[la]", "humans[mh]"),
    "local": ("hasabstract",),
    "subset": ("hasabstract",),
}
EXCLUDE: dict[str, str | None] = {
    "pubmed": None,
    "local": "(animals[mh] NOT humans[mh])",
    "subset": "(animals[mh] NOT humans[mh])",
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
    rules: RuleSet | None = None,
    dialect: str = "local",
    vocabulary: MeshVocabulary | None = None,
) -> str | None:
    """The query for ``frame`` under ``settings``; None when no slot is left to search."""
    from ebm.mesh import mesh
    from ebm.rules import load_rules

    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r} (one of {', '.join(DIALECTS)})")
    voc = vocabulary or mesh()
    rs = rules or load_rules()
    if settings.any_term:
        return any_term_query(frame, voc)
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
        clause = slot_clause(texts, voc, settings.mesh_only)
        if clause:
            slots.append(clause)
    if not slots:
        return None
    parts = list(slots)
    if settings.scope:
        f = rs.clinical_queries.filter(frame.task.value, settings.scope, dialect)
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
    rules: RuleSet | None = None,
    dialect: str = "local",
    vocabulary: MeshVocabulary | None = None,
) -> str:
    """The first, strictest query for ``frame``."""
    q = build_query(frame, rules=rules, dialect=dialect, vocabulary=vocabulary)
    if q is None:
        raise InputError("the frame has nothing to search for: give a problem or an intervention")
    return q


def ladder(
    frame: Frame,
    *,
    rules: RuleSet | None = None,
    dialect: str = "local",
    vocabulary: MeshVocabulary | None = None,
) -> list[tuple[str, tuple[str, ...]]]:
    """(query, relaxations used) from strictest to loosest; steps that change nothing are skipped."""
    settings = Settings()
    first = build_query(frame, settings, rules=rules, dialect=dialect, vocabulary=vocabulary)
    if first is None:
        raise InputError("the frame has nothing to search for: give a problem or an intervention")
    out = [(first, ())]
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


def retrieve(
    frame: Frame,
    source: CitationSource,
    min_hits: int = 20,
    limit: int = 50,
    *,
    rules: RuleSet | None = None,
    sort: Sort = "relevance",
    vocabulary: MeshVocabulary | None = None,
    dialect: str | None = None,
) -> Retrieval:
    """Search ``source`` for ``frame``, relaxing the query until ``min_hits`` citations come back.

    ``dialect`` defaults to the source's name ("pubmed" or "local"; "subset" for a source
    that parses only the minimal subset). When even the loosest query finds fewer than
    ``min_hits``, the attempt with the most hits is kept (the least relaxed among equals).
    A query the source refuses (``EbmError``) is recorded in ``attempts`` and the ladder goes
    on; if every query is refused, the last refusal is raised. A source that cannot be reached
    or answers too late (``SourceUnavailable``) or the question's deadline stops the ladder at once.
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
    return Retrieval(query, relaxations, result, tuple(attempts))
