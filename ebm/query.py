"""From a PICO frame to a PubMed query, relaxed step by step until enough citations come back.

The query (Demner-Fushman & Lin 2007, section 7, where a physician wrote them by hand) is

    problem AND intervention AND comparison AND population AND <Clinical Queries filter>
    AND hasabstract AND English[la] AND humans[mh]

Each slot term becomes ``("MeSH Heading"[mh] OR "term"[tiab])`` when it names a MeSH
descriptor (``ebm.mesh.mesh().resolve``), else the MeSH entry terms found inside it, each so,
ANDed with its remaining words as ``word[tiab]``; alternatives in a slot ("wheezing / asthma",
"acetaminophen, ibuprofen") are ORed. The filter is the task's narrow Clinical Queries filter
from ``rules/clinical_queries.tsv`` (PubMed's own string for PubMed, its translation into the
local store's subset otherwise).

``retrieve`` runs the query on any ``CitationSource``; while fewer than ``min_hits`` come back
it relaxes, cumulatively, in the order of ``LADDER``: drop the comparison, drop the population,
narrow -> broad filter, drop the filter, drop the English/humans limits, accept any word of a
multi-word term, drop the intervention. The result says which relaxations were used.

Every generated query stays inside the subset the local store parses (``parse_query``):
AND/OR/NOT, parentheses, quoted phrases, the tags [ti] [tiab] [mh] [majr] [pt] [la],
``hasabstract`` and year ranges ``2000:2010[dp]``; no truncation, no subheadings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ebm.errors import InputError
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


def _term(kind: str, text: str, tag: str | None, pos: int, query: str) -> Node:
    where = f"at character {pos + 1}"
    if tag is not None:
        t = tag.casefold()
        if t not in TAGS:
            short = LONG_TAGS.get(t, "")
            hint = f"; write [{short}]" if short else ""
            raise QuerySyntaxError(
                f"field tag [{tag}] {where} is not supported by the local store "
                f"(supported: {' '.join(f'[{x}]' for x in TAGS)}){hint}"
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
    toks = list(_tokens(query))
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
    "measurement measurements management outcome outcomes suspected".split()
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
            if word.casefold() not in STOPWORDS | GENERIC:
                out.append(Unit(word))
            i += 1
    return out


def slot_clause(texts: tuple[str, ...], vocabulary: MeshVocabulary, any_word: bool = False) -> str | None:
    """One slot as a clause: alternatives ORed, the units of each ANDed (ORed with ``any_word``)."""
    alts: list[str] = []
    for text in texts:
        for alt in alternatives(text):
            us = units(alt, vocabulary)
            if not us:
                continue
            joiner = " OR " if any_word else " AND "
            clause = joiner.join(u.clause() for u in us)
            if len(us) > 1:
                clause = f"({clause})"
            if clause not in alts:
                alts.append(clause)
    if not alts:
        return None
    return alts[0] if len(alts) == 1 else "(" + " OR ".join(alts) + ")"


# --- plans and relaxation ---------------------------------------------------------------

LIMITS = ("hasabstract", "English[la]", "humans[mh]")


@dataclass(frozen=True)
class Settings:
    """What a query includes; the ladder relaxes these one at a time."""

    comparison: bool = True
    population: bool = True
    intervention: bool = True
    scope: str | None = "narrow"  # Clinical Queries filter scope, None: no filter
    limits: bool = True
    any_word: bool = False


# (name, change): applied cumulatively, in this order, while too few citations come back.
LADDER: tuple[tuple[str, dict[str, object]], ...] = (
    ("drop comparison", {"comparison": False}),
    ("drop population", {"population": False}),
    ("broad filter", {"scope": "broad"}),
    ("drop filter", {"scope": None}),
    ("drop English/humans limits", {"limits": False}),
    ("any word", {"any_word": True}),
    ("drop intervention", {"intervention": False}),
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

    voc = vocabulary or mesh()
    rs = rules or load_rules()
    slots: list[str] = []
    wanted = [("problem", True), ("intervention", settings.intervention)]
    wanted += [("comparison", settings.comparison), ("population", settings.population)]
    for name, keep in wanted:
        if not keep:
            continue
        value = getattr(frame, name)
        texts = (value,) if isinstance(value, str) else tuple(value or ())
        clause = slot_clause(texts, voc, settings.any_word)
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
        parts.extend(LIMITS)
    return _and(parts)


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
    count: int


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
) -> Retrieval:
    """Search ``source`` for ``frame``, relaxing the query until ``min_hits`` citations come back.

    PubMed gets the Clinical Queries filters as PubMed defines them; any other source gets
    their local-subset translation. When even the loosest query finds fewer than ``min_hits``,
    the attempt with the most hits is kept (the least relaxed among equals).
    """
    dialect = "pubmed" if getattr(source, "name", "") == "pubmed" else "local"
    attempts: list[Attempt] = []
    best: tuple[int, str, tuple[str, ...], SearchResult] | None = None
    for query, relaxations in ladder(frame, rules=rules, dialect=dialect, vocabulary=vocabulary):
        result = source.search(query, limit=limit, sort=sort)
        attempts.append(Attempt(query, relaxations, result.count))
        if best is None or result.count > best[0]:
            best = (result.count, query, relaxations, result)
        if result.count >= min_hits:
            break
    assert best is not None
    _, query, relaxations, result = best
    return Retrieval(query, relaxations, result, tuple(attempts))
