"""PubMed query syntax for the local store: parse a query, translate it to SQL and FTS5.

The supported subset (docs/store.md has the full list):

- Boolean ``AND``, ``OR``, ``NOT`` (upper case, as PubMed requires), evaluated left to right
  with equal precedence like PubMed; parentheses nest; adjacent terms are ANDed.
- ``"quoted phrases"``; an unquoted run of words before a field tag is one term
  (``randomized controlled trial[pt]``), as in PubMed.
- Field tags: ``[ti]``, ``[tiab]``, ``[tw]``/``[all]``/untagged (title, abstract, MeSH names),
  ``[mh]`` (exploded down the MeSH trees), ``[mh:noexp]``, ``[majr]``, ``[majr:noexp]``,
  ``[sh]`` (subheading, not exploded), ``[pt]`` (exploded down the publication type tree),
  ``[pt:noexp]``, ``[la]``, ``[dp]`` (``2000:2010[dp]``, ``2016/03[dp]``), ``[pmid]``,
  ``hasabstract``; long forms such as ``[Title/Abstract]`` and ``[MeSH Terms]`` too.
- Truncation ``word*`` (at least 4 characters) in text fields, and ``prefix*`` over MeSH
  descriptor names in ``[mh]``/``[majr]``.

Anything else (an author tag, unbalanced parentheses, a dangling operator, a wildcard inside a
phrase, an unknown MeSH heading ...) raises ``InputError`` naming the part and its position
(characters counted from 1).

Translation: every term becomes a ``SELECT id`` over the store's tables (FTS5 ``MATCH`` for
text, the heading/publication-type tables for MeSH and [pt], columns for [la]/[dp]), and the
Boolean operators become ``INTERSECT``/``UNION``/``EXCEPT``. Relevance ranking is a separate
FTS5 expression: the OR of the query's positive text terms, whose BM25 for a citation equals
the BM25 of the whole expression (FTS5 sums BM25 per phrase, whatever the operators).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

from ebm.errors import InputError
from ebm.mesh import Descriptor, MeshVocabulary
from ebm.query_syntax import BoolOp, Node, Term, parse
from ebm.store.annotations import PICO_ELEMENTS

__all__ = ["BoolOp", "Node", "SqlQuery", "Term", "parse", "translate"]

MIN_PREFIX = 4  # PubMed wants at least four characters before a truncation '*'

# ---------------------------------------------------------------------------- field tags

TEXT_FIELDS = ("ti", "tiab", "tw")

# MEDLINE language codes (ISO 639-2/B as NLM uses them) and their English names.
LANGUAGES: dict[str, str] = {
    "afr": "afrikaans", "alb": "albanian", "amh": "amharic", "ara": "arabic", "arm": "armenian",
    "aze": "azerbaijani", "ben": "bengali", "bos": "bosnian", "bul": "bulgarian", "cat": "catalan",
    "chi": "chinese", "cze": "czech", "dan": "danish", "dut": "dutch", "eng": "english",
    "epo": "esperanto", "est": "estonian", "fin": "finnish", "fre": "french", "geo": "georgian",
    "ger": "german", "gla": "gaelic", "gre": "greek", "heb": "hebrew", "hin": "hindi",
    "hrv": "croatian", "hun": "hungarian", "ice": "icelandic", "ind": "indonesian", "ita": "italian",
    "jpn": "japanese", "kor": "korean", "lat": "latin", "lav": "latvian", "lit": "lithuanian",
    "mac": "macedonian", "mal": "malayalam", "mao": "maori", "may": "malay", "mul": "multiple",
    "nor": "norwegian", "per": "persian", "pol": "polish", "por": "portuguese", "pus": "pushto",
    "rum": "romanian", "rus": "russian", "san": "sanskrit", "slo": "slovak", "slv": "slovenian",
    "spa": "spanish", "srp": "serbian", "swe": "swedish", "tha": "thai", "tur": "turkish",
    "ukr": "ukrainian", "und": "undetermined", "urd": "urdu", "vie": "vietnamese", "wel": "welsh",
}  # fmt: skip
_LANGUAGE_BY_NAME = {name: code for code, name in LANGUAGES.items()}

# ---------------------------------------------------------------------------- translation


@dataclass(frozen=True)
class SqlQuery:
    """A query translated for the store: ``sql`` selects the matching citation ids."""

    sql: str
    params: tuple[object, ...]
    rank_match: str | None  # FTS5 expression over text_fts for BM25; None without text terms
    translation: str  # how the store understood the query, PubMed "search details" style


@dataclass
class _Compiled:
    sql: str
    params: list[object]
    text: str
    rank: list[str] = field(default_factory=list)
    op: str | None = None  # the Boolean operator at the top, None for a term
    # a full-text term as (FTS table, MATCH expression) pairs whose union it is; None otherwise
    fts: list[tuple[str, str]] | None = None


# known(kind, name): does the store hold a MeSH heading (kind "heading") or publication type
# (kind "pubtype") of that name? Asked only for names the MeSH 2024 vocabulary lacks.
NameLookup = Callable[[str, str], bool]


def translate(
    query: str,
    known: NameLookup | None = None,
    *,
    vocabulary: MeshVocabulary,
    pico: str | None = None,
) -> SqlQuery:
    """Parse ``query`` and translate it for the store: [mh]/[pt] names are looked up in
    ``vocabulary`` (the store's MeSH; required: the caller's ``Resources`` vocabulary, never a
    hidden default), ``known`` as above; ``pico``: the annotation version the PICO fields
    ([problem] [intervention] [population] [design] [grade]) read, None when the store holds
    no stored annotations."""
    node = parse(query)
    tr = _Translator(vocabulary, known or (lambda _kind, _name: False), pico)
    c = tr.node(node)
    rank = " OR ".join(f"({r})" for r in c.rank) or None
    if not tr.ctes:
        return SqlQuery(c.sql, tuple(c.params), rank, c.text)
    # each Boolean node is a named CTE over the earlier ones: the SQL text stays flat however
    # deep the query nests (nested subqueries overflow SQLite's parser stack at ~8 levels)
    with_ = ", ".join(f"{name}(id) AS ({sql})" for name, sql, _ in tr.ctes)
    params = [p for _, _, ps in tr.ctes for p in ps] + c.params
    return SqlQuery(f"WITH {with_} {c.sql}", tuple(params), rank, c.text)


class _Translator:
    def __init__(self, vocabulary: MeshVocabulary, known: NameLookup, pico: str | None = None) -> None:
        self.vocabulary = vocabulary
        self.known = known
        self.pico = pico
        self.ctes: list[tuple[str, str, list[object]]] = []  # (name, sql, params), in order

    def cte(self, sql: str, params: list[object]) -> str:
        name = f"q{len(self.ctes) + 1}"
        self.ctes.append((name, sql, params))
        return f"SELECT id FROM {name}"

    def node(self, node: Node, positive: bool = True) -> _Compiled:
        """Recursive over the tree's depth only, which ``parse`` bounds (``MAX_DEPTH``)."""
        if isinstance(node, Term):
            c = self.term(node)
            if not positive:
                c.rank = []
            return c
        if node.op == "NOT":  # the first item without any of the others
            include = self.node(node.items[0], positive)
            rest = [self.node(x, False) for x in node.items[1:]]
            exclude, params = _compound("UNION", _merged_fts(rest, "OR"))
            # shown left to right as PubMed reads it; parentheses where the operator changes
            first = include.text if include.op in (None, "NOT") else f"({include.text})"
            return _Compiled(
                self.cte(
                    f"SELECT id FROM ({include.sql}) EXCEPT SELECT id FROM ({exclude})",
                    include.params + params,
                ),
                [],
                " NOT ".join([first, *(_shown(r) for r in rest)]),
                include.rank,
                "NOT",
            )
        parts = [self.node(x, positive) for x in node.items]
        text = f" {node.op} ".join(
            p.text if i == 0 and p.op in (None, node.op) else _shown(p) for i, p in enumerate(parts)
        )
        rank = [r for p in parts for r in p.rank]
        selects = _merged_fts(parts, node.op)
        sql, params = _compound({"AND": "INTERSECT", "OR": "UNION"}[node.op], selects)
        return _Compiled(self.cte(sql, params), [], text, rank, node.op)

    def term(self, t: Term) -> _Compiled:
        if t.field in TEXT_FIELDS:
            return _text_term(t)
        if t.field in ("mh", "majr"):
            return self.mesh_term(t)
        if t.field == "pt":
            return self.pubtype_term(t)
        if t.field in PICO_FIELDS:
            return self.pico_term(t)
        return {"sh": _subheading_term, "la": _language_term, "dp": _date_term,
                "sb": _filter_term, "pmid": _pmid_term}[t.field](t)  # fmt: skip

    def mesh_term(self, t: Term) -> _Compiled:
        tag = f"{t.field}{'' if t.explode else ':noexp'}"
        descriptor_text, _, qualifier = t.text.partition("/")
        descriptor_text, qualifier = descriptor_text.strip(), qualifier.strip()
        if "*" in qualifier:
            raise InputError(f"wildcard in subheading {t.text!r} at position {t.pos + 1} is not supported")
        uis, shown = self.descriptors(t, descriptor_text)
        params: list[object]
        if uis is None:  # a name the store knows but MeSH 2024 does not
            vids, params = "SELECT id FROM vocab WHERE kind = 'D' AND name = ?", [descriptor_text]
            shown = f'"{descriptor_text}"[{tag}] (name as recorded)'
        else:
            vids = "SELECT id FROM vocab WHERE kind = 'D' AND ui IN (SELECT value FROM json_each(?))"
            params = [json.dumps(sorted(uis))]
        if qualifier:
            sql = (
                "SELECT DISTINCT q.cid AS id FROM qualifiers q JOIN headings h ON h.rowid = q.heading"
                f" WHERE h.vid IN ({vids}) AND q.vid IN (SELECT id FROM vocab WHERE kind = 'Q' AND name = ?)"
                + (" AND (q.major = 1 OR h.descriptor_major = 1)" if t.field == "majr" else "")
            )
            return _Compiled(sql, [*params, qualifier], f"{shown.split('[', 1)[0]}/{qualifier}[{tag}]")
        major = " AND major = 1" if t.field == "majr" else ""
        return _Compiled(
            f"SELECT DISTINCT cid AS id FROM headings WHERE vid IN ({vids}){major}", params, shown
        )

    def pubtype_term(self, t: Term) -> _Compiled:
        if "*" in t.text:
            raise InputError(
                f"wildcard in publication type {t.text!r} at position {t.pos + 1} is not supported"
            )
        tag = "pt" if t.explode else "pt:noexp"
        vocab = self.vocabulary
        d = _resolve_pubtype(vocab, t.text)
        names = [t.text]
        uis: set[str] = set()
        shown = f'"{t.text}"[{tag}] (name as recorded)'
        if d is not None:
            uis = vocab.explode(d.ui) if t.explode else {d.ui}
            names = sorted({t.text} | {vocab.descriptors[u].name for u in uis})
            shown = f'"{d.name}"[{tag}]{_narrower(uis, 1, t.explode)}'
        elif not self.known("pubtype", t.text):
            raise InputError(f"{t.text!r}[{t.tag}] at position {t.pos + 1} is not a publication type")
        # the name matters too: a record may give a type without its UI
        sql = (
            "SELECT DISTINCT cid AS id FROM pubtypes WHERE vid IN (SELECT id FROM vocab WHERE kind = 'P'"
            " AND (ui IN (SELECT value FROM json_each(?)) OR name IN (SELECT value FROM json_each(?))))"
        )
        return _Compiled(sql, [json.dumps(sorted(uis)), json.dumps(names)], shown)

    def descriptors(self, t: Term, text: str) -> tuple[set[str] | None, str]:
        """Descriptor UIs a [mh]/[majr] term stands for, and how to show it."""
        tag = f"{t.field}{'' if t.explode else ':noexp'}"
        vocab = self.vocabulary
        if "*" in text:
            prefix = text.casefold()
            if not prefix.endswith("*") or prefix.count("*") > 1:
                raise InputError(f"wildcard in {text!r} at position {t.pos + 1} must end the term")
            prefix = prefix[:-1]
            if len(prefix.strip()) < MIN_PREFIX:
                raise InputError(
                    f"truncated term {text!r} at position {t.pos + 1} needs at least {MIN_PREFIX} "
                    "characters before '*'"
                )
            found = [d for d in vocab.descriptors.values() if d.name.casefold().startswith(prefix)]
            uis = {d.ui for d in found}
            if t.explode:
                uis = set().union(*(vocab.explode(u) for u in uis)) if uis else set()
            return uis, f"{text}[{tag}] ({len(found)} headings{_narrower(uis, len(found), t.explode)})"
        d = _resolve_descriptor(vocab, text)
        if d is None:
            if self.known("heading", text):
                return None, ""
            hint = vocab.suggest(text)
            did = f" (did you mean {', '.join(repr(h) for h in hint)}?)" if hint else ""
            raise InputError(f"{text!r}[{t.tag}] at position {t.pos + 1} is not a MeSH heading{did}")
        uis = vocab.explode(d.ui) if t.explode else {d.ui}
        return uis, f'"{d.name}"[{tag}]{_narrower(uis, 1, t.explode)}'

    def pico_term(self, t: Term) -> _Compiled:
        """A PICO element of the stored annotations: MeSH names exploded as [mh], design and
        grade as labels (``DESIGN_ALIASES``)."""
        if self.pico is None:
            raise InputError(
                f"{t.text!r}[{t.tag}] at position {t.pos + 1}: the store holds no annotations "
                "(run `ebm corpus annotate` first)"
            )
        if t.field not in PICO_ELEMENTS:  # design, grade: a label
            value = t.text.strip().casefold().replace(" ", "_").replace("-", "_")
            if t.field == "grade":
                value = value.upper()
                if value not in ("A", "B", "C"):
                    raise InputError(f"{t.text!r}[grade] at position {t.pos + 1}: a grade is A, B or C")
            else:
                value = DESIGN_ALIASES.get(value, value)
                if value not in DESIGNS:
                    raise InputError(
                        f"{t.text!r}[design] at position {t.pos + 1} is not a design "
                        f"(one of: {', '.join(sorted(DESIGN_ALIASES))}, {', '.join(DESIGNS)})"
                    )
            sql = f"SELECT cid AS id FROM pico_labels WHERE version = ? AND {t.field} = ?"
            return _Compiled(sql, [self.pico, value], f"{value}[{t.field}]")
        if "*" in t.text:
            raise InputError(f"wildcard in {t.text!r}[{t.tag}] at position {t.pos + 1} is not supported")
        uis, shown = self.descriptors(t, t.text.strip())
        if uis is None:
            raise InputError(f"{t.text!r}[{t.tag}] at position {t.pos + 1} is not a MeSH heading")
        sql = (
            "SELECT DISTINCT cid AS id FROM pico_terms WHERE version = ? AND element = ?"
            " AND ui IN (SELECT value FROM json_each(?))"
        )
        return _Compiled(sql, [self.pico, t.field, json.dumps(sorted(uis))], shown)


# the design labels of extractors.design, and short names for them in [design]
DESIGNS = (
    "randomized_controlled_trial", "non_randomized_trial", "systematic_review", "guideline",
    "case_report", "diagnostic_accuracy", "case_control", "cross_sectional", "cohort",
    "narrative_review", "animal_or_in_vitro", "other",
)  # fmt: skip
DESIGN_ALIASES = {
    "rct": "randomized_controlled_trial", "trial": "randomized_controlled_trial",
    "nrt": "non_randomized_trial", "sr": "systematic_review", "meta_analysis": "systematic_review",
    "review": "narrative_review", "case": "case_report", "cross": "cross_sectional",
    "diagnostic": "diagnostic_accuracy", "animal": "animal_or_in_vitro",
}  # fmt: skip
# the elements indexed in pico_terms (as [mh] terms), then the labels of pico_labels
PICO_FIELDS = (*PICO_ELEMENTS, "design", "grade")


def _shown(c: _Compiled) -> str:
    return c.text if c.op is None else f"({c.text})"


# SQLite takes at most 500 SELECTs in one compound (SQLITE_MAX_COMPOUND_SELECT): longer
# chains are cut into nested groups of this many.
COMPOUND_CHUNK = 100


def _compound(sql_op: str, selects: list[tuple[str, list[object]]]) -> tuple[str, list[object]]:
    """One compound SELECT of ``selects`` (AND/OR are associative, so nesting keeps the meaning)."""
    while len(selects) > COMPOUND_CHUNK:
        selects = [
            _compound(sql_op, selects[i : i + COMPOUND_CHUNK]) for i in range(0, len(selects), COMPOUND_CHUNK)
        ]
    if len(selects) == 1:
        return selects[0]
    sql = f" {sql_op} ".join(f"SELECT id FROM ({s})" for s, _ in selects)
    return sql, [p for _, ps in selects for p in ps]


def _merged_fts(parts: list[_Compiled], op: str) -> list[tuple[str, list[object]]]:
    """The operands of one AND/OR as SELECTs, with their full-text terms merged into one
    MATCH per FTS table (``"a" OR "b" OR ...``): 600 ORed words are one FTS5 query, not 600."""
    joiner = f" {op} "
    merged: dict[str, list[str]] = {}
    out: list[tuple[str, list[object]]] = []
    for p in parts:
        fts = p.fts
        if fts is None or (op == "AND" and len(fts) > 1):  # text words: text OR headings, never ANDed
            out.append((p.sql, p.params))
            continue
        for table, match in fts:
            merged.setdefault(table, []).append(match)
    for table, matches in merged.items():
        match = matches[0] if len(matches) == 1 else joiner.join(f"({m})" for m in matches)
        out.append((_FTS_SELECT[table], [match]))
    return out


_FTS_SELECT = {
    "text_fts": "SELECT rowid AS id FROM text_fts WHERE text_fts MATCH ?",
    "word_fts": "SELECT rowid AS id FROM word_fts WHERE word_fts MATCH ?",
    "mesh_fts": "SELECT cid AS id FROM headings"
    " WHERE vid IN (SELECT rowid FROM mesh_fts WHERE mesh_fts MATCH ?)",
}


def _narrower(uis: set[str], n: int, explode: bool) -> str:
    more = len(uis) - n
    return f" (+{more} narrower)" if explode and more > 0 else ""


def _fts_phrase(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


_WORD = re.compile(r"\w", re.UNICODE)


def _text_term(t: Term) -> _Compiled:
    shown = f"{_fts_phrase(t.text)}[{t.field}]"
    if "*" in t.text:
        return _prefix_term(t, shown)
    if not _WORD.search(t.text):
        raise InputError(f"term {t.text!r} at position {t.pos + 1} has no searchable words")
    phrase = _fts_phrase(t.text)
    if t.field == "ti":
        match = f"title : {phrase}"
    else:
        match = phrase
    fts = [("text_fts", match)]
    if t.field == "tw":  # text words also cover the MeSH headings
        fts.append(("mesh_fts", phrase))
    sql = " UNION ".join(_FTS_SELECT[table] for table, _ in fts)
    return _Compiled(sql, [m for _, m in fts], shown, [match], fts=fts)


def _prefix_term(t: Term, shown: str) -> _Compiled:
    word = t.text
    if t.quoted or " " in word.strip() or not word.endswith("*") or word.count("*") > 1:
        raise InputError(
            f"wildcard in {t.text!r} at position {t.pos + 1} is not supported: '*' may only end a "
            "single word (no truncation inside phrases or words)"
        )
    stem = word[:-1]
    if len(stem) < MIN_PREFIX or not re.fullmatch(r"\w+", stem):
        raise InputError(
            f"truncated term {t.text!r} at position {t.pos + 1} needs at least {MIN_PREFIX} letters "
            "or digits before '*'"
        )
    columns = {"ti": "{title}", "tiab": "{title abstract}", "tw": "{title abstract mesh}"}[t.field]
    # word_fts is unstemmed: truncation must see the words as written, not porter stems
    match = f"{columns} : {_fts_phrase(stem)} *"
    return _Compiled(_FTS_SELECT["word_fts"], [match], f"{stem}*[{t.field}]", fts=[("word_fts", match)])


def _subheading_term(t: Term) -> _Compiled:
    if "*" in t.text:
        raise InputError(f"wildcard in subheading {t.text!r} at position {t.pos + 1} is not supported")
    return _Compiled(
        "SELECT DISTINCT cid AS id FROM qualifiers"
        " WHERE vid IN (SELECT id FROM vocab WHERE kind = 'Q' AND name = ?)",
        [t.text],
        f'"{t.text}"[sh] (not exploded)',
    )


def _language_term(t: Term) -> _Compiled:
    key = t.text.casefold()
    code = key if key in LANGUAGES else _LANGUAGE_BY_NAME.get(key)
    if code is None:
        raise InputError(
            f"unknown language {t.text!r} at position {t.pos + 1} (use a name like english or a "
            "MEDLINE code like eng)"
        )
    return _Compiled("SELECT id FROM citations WHERE language = ?", [code], f"{LANGUAGES[code]}[la]")


_DATE = r"(\d{4})(?:[/-](\d{1,2})(?:[/-](\d{1,2}))?)?"
_DATE_RANGE = re.compile(rf"^\s*{_DATE}\s*(?::\s*{_DATE}\s*)?$")


def _date_term(t: Term) -> _Compiled:
    m = _DATE_RANGE.match(t.text)
    if not m:
        raise InputError(
            f"{t.text!r}[{t.tag}] at position {t.pos + 1} is not a publication date or range "
            "(YYYY, YYYY/MM, YYYY/MM/DD, or FROM:TO such as 2000:2010)"
        )
    y1, m1, d1, y2, m2, d2 = m.groups()
    low = _date_key(y1, m1, d1, low=True)
    high = _date_key(y2 or y1, m2 if y2 else m1, d2 if y2 else d1, low=False)
    if low > high:
        raise InputError(f"date range {t.text!r} at position {t.pos + 1} ends before it starts")
    # sort_date is YYYY-MM-DD with 00 for a month or day the record does not give
    return _Compiled(
        "SELECT id FROM citations WHERE sort_date BETWEEN ? AND ?", [low, high], f"{t.text.strip()}[dp]"
    )


def _date_key(y: str, m: str | None, d: str | None, *, low: bool) -> str:
    month = f"{int(m):02d}" if m else ("00" if low else "99")
    day = f"{int(d):02d}" if d else ("00" if low else "99")
    return f"{int(y):04d}-{month}-{day}"


def _filter_term(t: Term) -> _Compiled:
    if re.sub(r"\s", "", t.text.casefold()) != "hasabstract":
        raise InputError(
            f"filter {t.text!r} at position {t.pos + 1} is not supported by the local store "
            "(only hasabstract)"
        )
    return _Compiled("SELECT id FROM citations WHERE has_abstract = 1", [], "hasabstract")


def _pmid_term(t: Term) -> _Compiled:
    if not t.text.isdigit():
        raise InputError(f"{t.text!r}[{t.tag}] at position {t.pos + 1} is not a PMID")
    return _Compiled("SELECT id FROM citations WHERE pmid = ?", [str(int(t.text))], f"{t.text}[pmid]")


# ---------------------------------------------------------------------------- MeSH lookups


def _name_variants(text: str) -> list[str]:
    base = " ".join(text.split())
    variants = [base, re.sub(r"\s*,\s*", ", ", base)]
    return list(dict.fromkeys(variants))


def _resolve_descriptor(vocab: MeshVocabulary, text: str) -> Descriptor | None:
    """A descriptor by UI, preferred name or entry term, as PubMed maps [mh] terms."""
    for name in _name_variants(text):
        d = vocab.by_name(name) or (vocab.get(name) if name.startswith("D") else None)
        if d:
            return d
    for name in _name_variants(text):
        d = vocab.resolve(name)  # entry terms: loads the term index on first use
        if d:
            return d
    return None


@cache
def _pubtype_uis(vocab: MeshVocabulary) -> frozenset[str]:
    """Descriptors in the Publication Characteristics tree (V): the publication types."""
    return frozenset(
        ui for ui, d in vocab.descriptors.items() if any(t.startswith("V") for t in d.tree_numbers)
    )


def _resolve_pubtype(vocab: MeshVocabulary, text: str) -> Descriptor | None:
    pts = _pubtype_uis(vocab)
    for name in _name_variants(text):
        d = vocab.by_name(name)
        if d and d.ui in pts:
            return d
        for ui in vocab.term_index.get(name.casefold(), ()):
            if ui in pts:
                return vocab.descriptors[ui]
    return None
