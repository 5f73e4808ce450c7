"""PubMed query syntax: the one parser and syntax tree of ``ebm``.

Used by the local store (``ebm.store.query`` translates the tree to SQL) and by
``ebm rules check`` (the Clinical Queries filters must parse). ``ebm.query`` writes queries in
this syntax.

- Boolean ``AND``, ``OR``, ``NOT`` (upper case, as PubMed requires), evaluated left to right
  with equal precedence like PubMed; parentheses nest; adjacent terms are ANDed; ``a AND NOT b``
  reads as ``a NOT b``.
- ``"quoted phrases"``; an unquoted run of words before a field tag is one term
  (``randomized controlled trial[pt]``), as in PubMed.
- Field tags: short and long forms (``[tiab]``, ``[Title/Abstract]``, ``[MeSH:noexp]`` ...),
  see ``FIELD_TAGS``; an untagged term is a text word (``tw``), ``hasabstract`` a filter (``sb``).

The tree is n-ary: a chain of one operator is one ``BoolOp`` (``a OR b OR c`` has three
items; ``a NOT b NOT c`` means a without b and without c). The parser is iterative, so a long
query cannot exhaust Python's stack; what it bounds is stated in ``MAX_TERMS`` and ``MAX_DEPTH``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ebm.errors import InputError

# Stated bounds: translation recurses once per level of the tree (2,000 levels would exhaust
# Python's stack), and SQLite binds at most 32,766 parameters (at most two per term).
MAX_DEPTH = 200
MAX_TERMS = 10_000


class QuerySyntaxError(InputError):
    """A query the parser cannot read, or that is outside what the caller accepts."""


# ---------------------------------------------------------------------------- field tags


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
    # PICO elements of the stored annotations (ebm corpus annotate; ebm.store.annotations)
    add("problem", "problems", noexp=True)
    add("intervention", "interventions", noexp=True)
    add("population", noexp=True)
    add("design")
    add("grade")
    return table


FIELD_TAGS = _tags()
SUPPORTED_TAGS = (
    "[ti] [tiab] [tw] [all] [mh] [mh:noexp] [majr] [majr:noexp] [sh] [pt] [pt:noexp] [la] [dp] [pmid] [sb]"
    " [problem] [intervention] [population] [design] [grade]"
)


def field_tag(tag: str, pos: int) -> FieldTag:
    """The field named by a tag as written (``Title/Abstract``, ``MeSH:noexp``, ``tiab``)."""
    key = re.sub(r"[\s/_\-]", "", tag.casefold())
    found = FIELD_TAGS.get(key)
    if found is None:
        raise QuerySyntaxError(
            f"field tag [{tag}] at position {pos + 1} is not supported by the local store "
            f"(supported: {SUPPORTED_TAGS})"
        )
    return found


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
    """``items[0] op items[1] op ...``; for NOT: the first item without any of the others."""

    op: str  # AND, OR, NOT
    items: tuple[Node, ...]
    pos: int  # of the first operator (of the second item for an implicit AND)


Node = Term | BoolOp
OPERATORS = ("AND", "OR", "NOT")


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
                raise QuerySyntaxError(f"unterminated quote at position {i + 1}: add the closing '\"'")
            out.append(_Token("phrase", query[i + 1 : end], i))
            i = end + 1
        elif ch == "[":
            end = query.find("]", i + 1)
            if end < 0:
                raise QuerySyntaxError(f"field tag '[' at position {i + 1} is never closed with ']'")
            out.append(_Token("tag", query[i + 1 : end].strip(), i))
            i = end + 1
        elif ch == "]":
            raise QuerySyntaxError(f"']' at position {i + 1} has no matching '['")
        else:
            j = i
            while j < n and not query[j].isspace() and query[j] not in '()"[]':
                j += 1
            word = query[i:j]
            out.append(_Token("op" if word in OPERATORS else "word", word, i))
            i = j
    return out


def _terms(tokens: list[_Token]) -> list[_Token | Term]:
    """Attach field tags to the term before them; a run of bare words before a tag is one term."""
    out: list[_Token | Term] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok.kind == "tag":
            raise QuerySyntaxError(f"field tag [{tok.text}] at position {tok.pos + 1} has no term before it")
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


@dataclass
class _Group:
    """A parenthesised group (or the whole query) being read."""

    open: _Token | None  # its '(' (None for the whole query)
    node: Node | None = None
    op: _Token | None = None  # an operator read, waiting for its right operand


def parse(query: str) -> Node:
    """The syntax tree of a PubMed-style query; ``QuerySyntaxError`` names what is wrong and where."""
    if not query.strip():
        raise QuerySyntaxError("empty query")
    items = _terms(_tokens(query))
    n_terms = sum(isinstance(x, Term) for x in items)
    if n_terms > MAX_TERMS:
        raise QuerySyntaxError(f"query has {n_terms:,} terms; the local store takes at most {MAX_TERMS:,}")
    stack = [_Group(None)]
    for item in items:
        group = stack[-1]
        if isinstance(item, Term):
            _operand(group, item, item.pos)
        elif item.kind == "lparen":
            stack.append(_Group(item))
        elif item.kind == "op":
            if group.op is not None:
                if group.op.text == "AND" and item.text == "NOT":  # "a AND NOT b" is "a NOT b"
                    group.op = item
                    continue
                raise QuerySyntaxError(
                    f"operator {group.op.text} at position {group.op.pos + 1} is followed by operator "
                    f"{item.text} at position {item.pos + 1}"
                )
            if group.node is None:
                raise QuerySyntaxError(
                    f"operator {item.text} at position {item.pos + 1} has no term before it"
                )
            group.op = item
        else:  # ')'
            if group.open is None:
                raise QuerySyntaxError(f"')' at position {item.pos + 1} has no matching '('")
            if group.op is not None:
                raise QuerySyntaxError(
                    f"operator {group.op.text} at position {group.op.pos + 1} has no term after it"
                )
            if group.node is None:
                raise QuerySyntaxError(f"empty parentheses at position {group.open.pos + 1}")
            stack.pop()
            _operand(stack[-1], group.node, group.open.pos)
    group = stack[-1]
    if group.op is not None:
        raise QuerySyntaxError(
            f"operator {group.op.text} at position {group.op.pos + 1} has no term after it"
        )
    if group.open is not None:
        raise QuerySyntaxError(f"'(' at position {group.open.pos + 1} is never closed")
    assert group.node is not None  # a non-empty query without a term fails above
    depth = tree_depth(group.node)
    if depth > MAX_DEPTH:
        raise QuerySyntaxError(
            f"query nests {depth} levels of different operators; the local store takes at most {MAX_DEPTH}"
        )
    return group.node


def _operand(group: _Group, node: Node, pos: int) -> None:
    if group.node is None:
        group.node = node
        return
    op, at = ("AND", pos) if group.op is None else (group.op.text, group.op.pos)
    group.node = combine(op, group.node, node, at)
    group.op = None


def combine(op: str, left: Node, right: Node, pos: int) -> BoolOp:
    """``left op right``, kept flat: a chain of one operator is one node (AND and OR are
    associative, so a right operand of the same operator joins too; NOT's does not)."""
    chain = isinstance(left, BoolOp) and left.op == op
    items = left.items if isinstance(left, BoolOp) and chain else (left,)
    at = left.pos if isinstance(left, BoolOp) and chain else pos
    if op != "NOT" and isinstance(right, BoolOp) and right.op == op:
        return BoolOp(op, items + right.items, at)
    return BoolOp(op, (*items, right), at)


def tree_depth(node: Node) -> int:
    """Levels of operators (a term alone: 0), without recursion."""
    deepest = 0
    todo: list[tuple[Node, int]] = [(node, 0)]
    while todo:
        n, d = todo.pop()
        if isinstance(n, BoolOp):
            todo.extend((x, d + 1) for x in n.items)
            deepest = max(deepest, d + 1)
    return deepest


def iter_terms(node: Node) -> list[Term]:
    """The terms of a tree, left to right."""
    out: list[Term] = []
    todo: list[Node] = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, Term):
            out.append(n)
        else:
            todo.extend(reversed(n.items))
    return out


# ---------------------------------------------------------------------------- the minimal subset

# The subset every source takes (rules/clinical_queries.tsv, column SUBSET): no truncation,
# no subheadings, no :noexp, no [tw]/[pmid], short tags.
SUBSET_FIELDS = ("ti", "tiab", "mh", "majr", "pt", "la", "dp", "sb")
_YEARS = re.compile(r"^\d{4}(?::\d{4})?$")


def require_subset(query: str) -> Node:
    """Parse ``query`` and check it stays inside the minimal subset (``QuerySyntaxError`` if not)."""
    node = parse(query)
    for t in iter_terms(node):
        where = f"at position {t.pos + 1}"
        if t.tag is not None and t.field not in SUBSET_FIELDS or not t.explode:
            raise QuerySyntaxError(
                f"field tag [{t.tag}] {where} is not in the query subset "
                f"({' '.join(f'[{x}]' for x in SUBSET_FIELDS if x != 'sb')})"
            )
        if t.tag is not None and t.tag.casefold() not in SUBSET_FIELDS:
            raise QuerySyntaxError(f"field tag [{t.tag}] {where}: write [{t.field}]")
        if "*" in t.text:
            raise QuerySyntaxError(
                f"truncation ({t.text}) {where} is not in the query subset: list the words"
            )
        if t.field == "dp" and not _YEARS.match(t.text):
            raise QuerySyntaxError(f"[dp] {where} takes a year or a year range (2000:2010[dp])")
    return node
