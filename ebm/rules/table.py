"""Editable rule tables: typed columns, comments, file-and-line errors, exact round trip.

Two formats share one schema (a tuple of ``Column``):

* TSV (``*.tsv``): one row per line, cells separated by tabs, in the schema's column
  order; trailing optional cells may be left off. ``#`` starts a comment line; a cell
  beyond the schema's columns that starts with ``#`` is a comment on that row. Blank
  lines are kept. There is no header line: each file explains its columns in its
  leading comment (the style of every table in ``rules/``).
* TOML (``*.toml``): an array of tables, ``[[row]]`` blocks with one key per column;
  ``#`` comments anywhere. Read with ``tomllib``; line numbers come from the block
  headers.

Loading checks each cell against its column (``InputError`` naming file, line and column,
as medspacy does for its context rules). ``Table.dumps()`` reproduces the file exactly
when nothing changed: every row keeps its source text, and only rows whose values were
changed (``Table.replace``) are written anew.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.errors import InputError

Parser = Callable[[Any], Any]  # raises ValueError with a short reason
Formatter = Callable[[Any], str]


@dataclass(frozen=True)
class Column:
    """One typed column; ``parse`` turns a cell (str in TSV, str/number/bool in TOML) into a value."""

    name: str
    parse: Parser
    required: bool = True  # an empty cell is an error (else the value is ``default``)
    default: Any = None
    format: Formatter = str
    help: str = ""


# --- column types -----------------------------------------------------------------------


def text(name: str, *, required: bool = True, default: Any = None, help: str = "") -> Column:
    def parse(v: Any) -> str:
        if not isinstance(v, str):
            raise ValueError(f"expected text, got {v!r}")
        return v.strip()

    return Column(name, parse, required, default, str, help)


def number(
    name: str,
    *,
    required: bool = True,
    default: Any = None,
    minimum: float | None = None,
    maximum: float | None = None,
    help: str = "",
) -> Column:
    def parse(v: Any) -> float:
        if isinstance(v, bool):
            raise ValueError(f"expected a number, got {v!r}")
        try:
            x = float(v.strip()) if isinstance(v, str) else float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{v!r} is not a number (use a dot for decimals: 0.5)") from None
        if not math.isfinite(x):
            raise ValueError(f"{v!r} is not a finite number")
        if minimum is not None and x < minimum:
            raise ValueError(f"{x:g} is below the minimum {minimum:g}")
        if maximum is not None and x > maximum:
            raise ValueError(f"{x:g} is above the maximum {maximum:g}")
        return x

    return Column(name, parse, required, default, _format_number, help)


def choice(
    name: str, values: Sequence[str], *, required: bool = True, default: Any = None, help: str = ""
) -> Column:
    allowed = tuple(values)

    def parse(v: Any) -> str:
        s = v.strip() if isinstance(v, str) else v
        if s not in allowed:
            close = closest(str(s), allowed)
            hint = f"; did you mean {close!r}?" if close else ""
            raise ValueError(f"{s!r} is not one of {', '.join(allowed)}{hint}")
        return s

    return Column(name, parse, required, default, str, help)


def _format_number(x: Any) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


def closest(word: str, options: Sequence[str]) -> str | None:
    import difflib

    hits = difflib.get_close_matches(word.casefold(), [o.casefold() for o in options], n=1, cutoff=0.6)
    if not hits:
        return None
    return next(o for o in options if o.casefold() == hits[0])


# --- rows and tables --------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    """A parsed row: typed ``values`` by column name, where it came from, and its comment."""

    values: dict[str, Any]
    line: int
    comment: str | None = None  # the trailing ``# ...`` comment (TSV) without the '#'

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


@dataclass
class _Chunk:
    """A run of source text: a comment/blank line, or one row with its own text."""

    text: str
    row_index: int | None = None  # index into Table.rows when this chunk is a row


@dataclass
class Table:
    path: Path
    columns: tuple[Column, ...]
    rows: list[Row] = field(default_factory=list)
    format: str = "tsv"  # "tsv" or "toml"
    _chunks: list[_Chunk] = field(default_factory=list, repr=False)
    _original: list[dict[str, Any]] = field(default_factory=list, repr=False)

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def where(self, row: Row) -> str:
        """``file:line`` of a row, for messages."""
        return f"{self.path}:{row.line}"

    def replace(self, index: int, **values: Any) -> Row:
        """Change cells of row ``index`` (values are checked by their column); returns the new row."""
        old = self.rows[index]
        new = dict(old.values)
        cols = {c.name: c for c in self.columns}
        for k, v in values.items():
            if k not in cols:
                raise InputError(f"{self.path}: no column {k!r} (columns: {', '.join(cols)})")
            new[k] = None if v is None else _check(cols[k], v, self.path, old.line)
        row = Row(new, old.line, old.comment)
        self.rows[index] = row
        return row

    def dumps(self) -> str:
        """The file text: unchanged rows keep their source text exactly."""
        out: list[str] = []
        for chunk in self._chunks:
            i = chunk.row_index
            if i is None or self.rows[i].values == self._original[i]:
                out.append(chunk.text)
            elif self.format == "tsv":
                out.append(self._tsv_line(self.rows[i]) + _line_end(chunk.text))
            else:
                out.append(self._toml_block(self.rows[i], chunk.text))
        return "".join(out)

    def write(self, path: Path | None = None) -> Path:
        target = Path(path) if path else self.path
        target.write_text(self.dumps(), encoding="utf-8")
        return target

    def _tsv_line(self, row: Row) -> str:
        cells = [_cell(c, row.values.get(c.name)) for c in self.columns]
        while cells and cells[-1] == "" and not self.columns[len(cells) - 1].required:
            cells.pop()
        if row.comment is not None:
            cells.append("#" + row.comment)
        return "\t".join(cells)

    def _toml_block(self, row: Row, old: str) -> str:
        # Keep the comment lines that preceded the old block's header and whatever followed
        # its keys (comments, blank lines); rewrite the header and key lines.
        lines = old.splitlines(keepends=True)
        head = next(i for i, ln in enumerate(lines) if _TOML_HEADER.match(ln))
        keys = head + 1
        while keys < len(lines) and re.match(r"\s*[A-Za-z_][\w-]*\s*=", lines[keys]):
            keys += 1
        body = [lines[head]]
        for c in self.columns:
            v = row.values.get(c.name)
            if v is not None:
                body.append(f"{c.name} = {_toml_value(v)}\n")
        return "".join(lines[:head] + body + lines[keys:])


def _cell(column: Column, value: Any) -> str:
    return "" if value is None else column.format(value)


def _line_end(s: str) -> str:
    return s[len(s.rstrip("\r\n")) :]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else f"{v:.1f}"
    if isinstance(v, int):
        return str(v)
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


def _check(column: Column, raw: Any, path: Path, line: int) -> Any:
    try:
        return column.parse(raw)
    except ValueError as exc:
        raise InputError(f"{path}:{line}: column {column.name!r}: {exc}") from None


# --- loading ----------------------------------------------------------------------------


def load(path: str | Path, columns: Sequence[Column], errors: list[InputError] | None = None) -> Table:
    """Read a TSV or TOML table (by extension); errors name file, line and column.

    With ``errors`` given, a bad row is skipped and its error appended there (so a checker
    can report every bad row); otherwise the first bad row raises ``InputError``.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"rule table not found: {p}")
    try:
        content = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if p.suffix == ".toml":
        return loads_toml(content, columns, p, errors)
    return loads_tsv(content, columns, p, errors)


def loads_tsv(
    content: str, columns: Sequence[Column], path: Path, errors: list[InputError] | None = None
) -> Table:
    cols = tuple(columns)
    table = Table(path, cols, format="tsv")
    for n, line in enumerate(content.splitlines(keepends=True), start=1):
        try:
            row = _tsv_row(line, n, cols, path)
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)
            row = None
        if row is None:
            table._chunks.append(_Chunk(line))
            continue
        table._chunks.append(_Chunk(line, len(table.rows)))
        table.rows.append(row)
        table._original.append(dict(row.values))
    return table


def _tsv_row(line: str, n: int, cols: tuple[Column, ...], path: Path) -> Row | None:
    """The row of one TSV line; None for comment and blank lines."""
    body = line.rstrip("\r\n")
    if not body.strip() or body.lstrip().startswith("#"):
        return None
    cells = body.split("\t")
    comment = None
    for i, c in enumerate(cells):
        if i > 0 and c.lstrip().startswith("#"):
            comment = "\t".join(cells[i:]).lstrip()[1:]
            cells = cells[:i]
            break
    if len(cells) > len(cols):
        extra = cells[len(cols)]
        raise InputError(
            f"{path}:{n}: {len(cells)} cells, at most {len(cols)} expected "
            f"({', '.join(c.name for c in cols)}); unexpected {extra!r} "
            "(start a trailing comment with '#')"
        )
    values: dict[str, Any] = {}
    for i, col in enumerate(cols):
        cell = cells[i] if i < len(cells) else ""
        if cell.strip() == "":
            if col.required:
                what = "missing" if i >= len(cells) else "empty"
                raise InputError(f"{path}:{n}: column {col.name!r} is {what} ({col.help or 'required'})")
            values[col.name] = col.default
        else:
            values[col.name] = _check(col, cell, path, n)
    return Row(values, n, comment)


_TOML_HEADER = re.compile(r"^\s*\[\[\s*([A-Za-z_][\w-]*)\s*\]\]\s*(#.*)?$")


def loads_toml(
    content: str, columns: Sequence[Column], path: Path, errors: list[InputError] | None = None
) -> Table:
    cols = tuple(columns)
    table = Table(path, cols, format="toml")
    try:
        doc = tomllib.loads(content)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    lines = content.splitlines(keepends=True)
    headers = [i for i, ln in enumerate(lines) if _TOML_HEADER.match(ln)]
    names = {_TOML_HEADER.match(lines[i]).group(1) for i in headers}  # type: ignore[union-attr]
    if len(names) > 1 or set(doc) - names:
        raise InputError(f"{path}: expected only [[row]] blocks, found {', '.join(sorted(set(doc) | names))}")
    records = doc[next(iter(names))] if names else []
    if len(records) != len(headers):
        raise InputError(f"{path}: {len(headers)} [[...]] headers but {len(records)} rows")
    # Each block runs from the comment lines just above its header to the next block's.
    starts = []
    for h in headers:
        s = h
        while s > 0 and lines[s - 1].lstrip().startswith("#"):
            s -= 1
        starts.append(s)
    if starts:
        table._chunks.append(_Chunk("".join(lines[: starts[0]])))
    for k, (rec, h) in enumerate(zip(records, headers, strict=True)):
        n = h + 1
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        block = "".join(lines[starts[k] : end])
        try:
            values = _toml_row(rec, n, cols, path)
        except InputError as exc:
            if errors is None:
                raise
            errors.append(exc)
            table._chunks.append(_Chunk(block))
            continue
        table._chunks.append(_Chunk(block, len(table.rows)))
        table.rows.append(Row(values, n))
        table._original.append(dict(values))
    if not headers:
        table._chunks.append(_Chunk(content))
    return table


def _toml_row(rec: dict[str, Any], n: int, cols: tuple[Column, ...], path: Path) -> dict[str, Any]:
    known = {c.name for c in cols}
    for key, v in rec.items():
        if key not in known:
            close = closest(key, sorted(known))
            hint = f"; did you mean {close!r}?" if close else ""
            raise InputError(f"{path}:{n}: unknown key {key!r}{hint}")
        if isinstance(v, dict | list):
            raise InputError(f"{path}:{n}: key {key!r}: nested values are not allowed")
    values: dict[str, Any] = {}
    for col in cols:
        v = rec.get(col.name)
        if v is None or (isinstance(v, str) and not v.strip()):
            if col.required:
                raise InputError(f"{path}:{n}: key {col.name!r} is missing ({col.help or 'required'})")
            values[col.name] = col.default
        else:
            values[col.name] = _check(col, v, path, n)
    return values
