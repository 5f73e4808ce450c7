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
from ebm.mesh import Descriptor, mesh

MIN_PREFIX = 4  # PubMed wants at least four characters before a truncation '*'

# ---------------------------------------------------------------------------- field tags

TEXT_FIELDS = ("ti", "tiab", "tw")


@dataclass(frozen=True)
class FieldTag:
    name: str  # canonical: ti, tiab, tw, mh, majr, sh, pt, la, dp, sb, pmid
    explode: bool = True


def _tags() -> dict[str, FieldTag]:
    table: dict[str, FieldTag] = {}

    def add(name: str, *aliases: str, noexp: bool = False) -> None:
        for alias in (name, *aliases):
            table[alias] = FieldTag(name)
            if noexp:
                table[alias + ":noexp"] = FieldTag(name, explode=False)

    add("ti", "title")
    add("tiab", "titleabstract")
    add("tw", "textword", "textwords", "all", "allfields")
    add("mh", "mesh", "meshterms", "meshterm", "meshheading", "meshheadings", noexp=True)
    add("majr", "meshmajortopic", "majortopic", noexp=True)
    add("sh", "subheading", "meshsubheading", noexp=True)
    add("pt", "publicationtype", "ptyp", noexp=True)
    add("la", "lang", "language")
    add("dp", "pdat", "publicationdate", "dateofpublication")
    add("sb", "filter", "subset", "text")
    add("pmid", "uid", "pubmedid")
    return table


FIELD_TAGS = _tags()
SUPPORTED_TAGS = (
    "[ti] [tiab] [tw] [all] [mh] [mh:noexp] [majr] [majr:noexp] [sh] [pt] [pt:noexp] [la] [dp] [pmid] [sb]"
)


def field_tag(tag: str, pos: int) -> FieldTag:
    """The field named by a tag as written (``Title/Abstract``, ``MeSH:noexp``, ``tiab``)."""
    key = re.sub(r"[\s/_\-]", "", tag.casefold())
    found = FIELD_TAGS.get(key)
    if found is None:
        raise InputError(
            f"field tag [{tag}] at position {pos + 1} is not supported by the local store "
            f"(supported: {SUPPORTED_TAGS})"
        )
    return found


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

# ---------------------------------------------------------------------------- syntax tree


@dataclass(frozen=True)
class Term:
    """One search term with its field; ``pos`` is its 0-based offset in the query."""

    text: str
    field: str
    pos: int
    quoted: bool = False
    explode: bool = True
    tag: str | None = None  # the tag as written, None when untagged


@dataclass(frozen=True)
class BoolOp:
    op: str  # AND, OR, NOT
    left: Node
    right: Node
    pos: int  # of the operator (of the right operand for an implicit AND)


Node = Term | BoolOp


@dataclass(frozen=True)
class _Token:
    kind: str  # word, phrase, tag, op, lparen, rparen
    text: str
    pos: int


def _tokens(query: str) -> list[_Token]:
    out: list[_Token] = []
    i, n = 0, len(query)
    while i < n:
        ch = query[i]
        if ch.isspace():
            i += 1
        elif ch == "(":
            out.append(_Token("lparen", ch, i))
            i += 1
        elif ch == ")":
            out.append(_Token("rparen", ch, i))
            i += 1
        elif ch == '"':
            end = query.find('"', i + 1)
            if end < 0:
                raise InputError(f"unterminated quote at position {i + 1}: add the closing '\"'")
            out.append(_Token("phrase", query[i + 1 : end], i))
            i = end + 1
        elif ch == "[":
            end = query.find("]", i + 1)
            if end < 0:
                raise InputError(f"field tag '[' at position {i + 1} is never closed with ']'")
            out.append(_Token("tag", query[i + 1 : end].strip(), i))
            i = end + 1
        elif ch == "]":
            raise InputError(f"']' at position {i + 1} has no matching '['")
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"[]':
                j += 1
            word = query[i:j]
            out.append(_Token("op" if word in ("AND", "OR", "NOT") else "word", word, i))
            i = j
    return out


def _terms(tokens: list[_Token]) -> list[_Token | Term]:
    """Attach field tags to the term before them; a run of bare words before a tag is one term."""
    out: list[_Token | Term] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "tag":
            raise InputError(f"field tag [{tok.text}] at position {tok.pos + 1} has no term before it")
        if tok.kind == "phrase":
            tag = tokens[i + 1] if i + 1 < len(tokens) and tokens[i + 1].kind == "tag" else None
            out.append(_make_term(tok.text, tok.pos, quoted=True, tag=tag))
            i += 2 if tag else 1
        elif tok.kind == "word":
            j = i
            while j < len(tokens) and tokens[j].kind == "word":
                j += 1
            if j < len(tokens) and tokens[j].kind == "tag":
                text = " ".join(t.text for t in tokens[i:j])
                out.append(_make_term(text, tok.pos, quoted=False, tag=tokens[j]))
                i = j + 1
            else:
                out.extend(_make_term(t.text, t.pos, quoted=False, tag=None) for t in tokens[i:j])
                i = j
        else:
            out.append(tok)
            i += 1
    return out


def _make_term(text: str, pos: int, *, quoted: bool, tag: _Token | None) -> Term:
    if tag is None:
        if not quoted and text.casefold() == "hasabstract":
            return Term(text, "sb", pos)
        return Term(text, "tw", pos, quoted=quoted)
    ft = field_tag(tag.text, tag.pos)
    return Term(text.strip(), ft.name, pos, quoted=quoted, explode=ft.explode, tag=tag.text)


def parse(query: str) -> Node:
    """The syntax tree of a PubMed-style query; ``InputError`` names what is wrong and where."""
    if not query.strip():
        raise InputError("empty query")
    items = _terms(_tokens(query))
    parser = _Parser(items)
    node = parser.expr()
    if parser.i < len(items):  # only a stray ')' stops expr() early
        tok = items[parser.i]
        assert isinstance(tok, _Token)
        raise InputError(f"')' at position {tok.pos + 1} has no matching '('")
    return node


class _Parser:
    """PubMed grammar: operators of equal precedence, applied left to right."""

    def __init__(self, items: list[_Token | Term]) -> None:
        self.items = items
        self.i = 0

    def peek(self) -> _Token | Term | None:
        return self.items[self.i] if self.i < len(self.items) else None

    def expr(self) -> Node:
        left = self.unit(after=None)
        while True:
            item = self.peek()
            if item is None or (isinstance(item, _Token) and item.kind == "rparen"):
                return left
            if isinstance(item, _Token) and item.kind == "op":
                self.i += 1
                op, pos = item.text, item.pos
                nxt = self.peek()
                # "a AND NOT b" is read as "a NOT b", which is what people mean by it
                if op == "AND" and isinstance(nxt, _Token) and nxt.kind == "op" and nxt.text == "NOT":
                    self.i += 1
                    op, item = "NOT", nxt
                right = self.unit(after=item)
            else:
                op, pos = "AND", _pos(item)
                right = self.unit(after=None)
            left = BoolOp(op, left, right, pos)

    def unit(self, after: _Token | None) -> Node:
        item = self.peek()
        if item is None:
            if after is not None:
                raise InputError(f"operator {after.text} at position {after.pos + 1} has no term after it")
            raise InputError("query ends where a term was expected")
        if isinstance(item, Term):
            self.i += 1
            return item
        if item.kind == "lparen":
            self.i += 1
            nxt = self.peek()
            if isinstance(nxt, _Token) and nxt.kind == "rparen":
                raise InputError(f"empty parentheses at position {item.pos + 1}")
            if nxt is None:
                raise InputError(f"'(' at position {item.pos + 1} is never closed")
            node = self.expr()
            close = self.peek()
            if close is None:
                raise InputError(f"'(' at position {item.pos + 1} is never closed")
            self.i += 1
            return node
        if item.kind == "op":
            if after is not None:
                raise InputError(
                    f"operator {after.text} at position {after.pos + 1} is followed by operator "
                    f"{item.text} at position {item.pos + 1}"
                )
            raise InputError(f"operator {item.text} at position {item.pos + 1} has no term before it")
        # a ')' where a term should be
        if after is not None:
            raise InputError(f"operator {after.text} at position {after.pos + 1} has no term after it")
        raise InputError(f"')' at position {item.pos + 1} has no matching '('")


def _pos(item: _Token | Term | None) -> int:
    return item.pos if item is not None else 0


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


# known(kind, name): does the store hold a MeSH heading (kind "heading") or publication type
# (kind "pubtype") of that name? Asked only for names the MeSH 2024 vocabulary lacks.
NameLookup = Callable[[str, str], bool]


def translate(query: str, known: NameLookup | None = None) -> SqlQuery:
    """Parse ``query`` and translate it for the store (``known`` as above)."""
    node = parse(query)
    c = _Translator(known or (lambda _kind, _name: False)).node(node)
    rank = " OR ".join(f"({r})" for r in c.rank) or None
    return SqlQuery(c.sql, tuple(c.params), rank, c.text)


class _Translator:
    def __init__(self, known: NameLookup) -> None:
        self.known = known

    def node(self, node: Node, positive: bool = True) -> _Compiled:
        if isinstance(node, Term):
            c = self.term(node)
            if not positive:
                c.rank = []
            return c
        left = self.node(node.left, positive=positive)
        right = self.node(node.right, positive=positive and node.op != "NOT")
        sql_op = {"AND": "INTERSECT", "OR": "UNION", "NOT": "EXCEPT"}[node.op]
        # shown left to right as PubMed reads it; parentheses where the operator changes
        left_text = left.text if left.op in (None, node.op) else f"({left.text})"
        right_text = right.text if right.op is None else f"({right.text})"
        # SQLite applies compound operators left to right, as PubMed applies Boolean ones, so
        # the left operand goes in unwrapped: a long chain stays flat instead of nesting (deep
        # nesting overflows SQLite's parser stack at about 40 terms)
        return _Compiled(
            f"{left.sql} {sql_op} SELECT id FROM ({right.sql})",
            left.params + right.params,
            f"{left_text} {node.op} {right_text}",
            left.rank + right.rank,
            node.op,
        )

    def term(self, t: Term) -> _Compiled:
        if t.field in TEXT_FIELDS:
            return _text_term(t)
        if t.field in ("mh", "majr"):
            return self.mesh_term(t)
        if t.field == "pt":
            return self.pubtype_term(t)
        return {"sh": _subheading_term, "la": _language_term, "dp": _date_term,
                "sb": _filter_term, "pmid": _pmid_term}[t.field](t)  # fmt: skip

    def mesh_term(self, t: Term) -> _Compiled:
        tag = f"{t.field}{'' if t.explode else ':noexp'}"
        descriptor_text, _, qualifier = t.text.partition("/")
        descriptor_text, qualifier = descriptor_text.strip(), qualifier.strip()
        if "*" in qualifier:
            raise InputError(f"wildcard in subheading {t.text!r} at position {t.pos + 1} is not supported")
        uis, shown = self.descriptors(t, descriptor_text)
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
        d = _resolve_pubtype(t.text)
        names = [t.text]
        uis: set[str] = set()
        shown = f'"{t.text}"[{tag}] (name as recorded)'
        if d is not None:
            uis = mesh().explode(d.ui) if t.explode else {d.ui}
            names = sorted({t.text} | {mesh().descriptors[u].name for u in uis})
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
        vocab = mesh()
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
        d = _resolve_descriptor(text)
        if d is None:
            if self.known("heading", text):
                return None, ""
            hint = vocab.suggest(text)
            did = f" (did you mean {', '.join(repr(h) for h in hint)}?)" if hint else ""
            raise InputError(f"{text!r}[{t.tag}] at position {t.pos + 1} is not a MeSH heading{did}")
        uis = vocab.explode(d.ui) if t.explode else {d.ui}
        return uis, f'"{d.name}"[{tag}]{_narrower(uis, 1, t.explode)}'


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
    sql = "SELECT rowid AS id FROM text_fts WHERE text_fts MATCH ?"
    params: list[object] = [match]
    if t.field == "tw":  # text words also cover the MeSH headings
        sql += (
            " UNION SELECT cid FROM headings WHERE vid IN (SELECT rowid FROM mesh_fts WHERE mesh_fts MATCH ?)"
        )
        params.append(phrase)
    return _Compiled(sql, params, shown, [match])


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
    return _Compiled(
        "SELECT rowid AS id FROM word_fts WHERE word_fts MATCH ?", [match], f"{stem}*[{t.field}]"
    )


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


def _resolve_descriptor(text: str) -> Descriptor | None:
    """A descriptor by UI, preferred name or entry term, as PubMed maps [mh] terms."""
    vocab = mesh()
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
def _pubtype_uis() -> frozenset[str]:
    """Descriptors in the Publication Characteristics tree (V): the publication types."""
    return frozenset(
        ui for ui, d in mesh().descriptors.items() if any(t.startswith("V") for t in d.tree_numbers)
    )


def _resolve_pubtype(text: str) -> Descriptor | None:
    vocab = mesh()
    pts = _pubtype_uis()
    for name in _name_variants(text):
        d = vocab.by_name(name)
        if d and d.ui in pts:
            return d
        for ui in vocab.term_index.get(name.casefold(), ()):
            if ui in pts:
                return vocab.descriptors[ui]
    return None
