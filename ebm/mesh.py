"""The MeSH 2024 descriptor vocabulary shipped in ``ebm/data/mesh``.

Built by ``scripts/build_mesh_data.py``. Gives descriptors by UI and name, tree numbers,
tree explosion ("X and all its children"), entry terms and pharmacological actions.

Start-up cost matters (every ``ebm`` command that validates rules or formulates a query needs
the entry-term index), so the index of 264k entry terms is a compact ``TermIndex`` cached in
``data_dir()/cache`` under a digest of the MeSH data: built once (~1 s), then read in
milliseconds. ``suggest`` narrows the candidates with character counts before difflib.
"""

from __future__ import annotations

import bisect
import difflib
import gzip
import hashlib
import marshal
import os
import sys
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from ebm.errors import DataError
from ebm.paths import data_dir, package_data

DATA_FILES = ("descriptors.tsv.gz", "terms.tsv.gz", "pharm_actions.tsv.gz")
# Bump when TermIndex's layout changes: old cache files are then ignored and removed.
TERM_INDEX_FORMAT = 1
CACHE_DIR = "cache"


@dataclass(frozen=True)
class Descriptor:
    ui: str
    name: str
    tree_numbers: tuple[str, ...]


@dataclass(frozen=True)
class Term:
    descriptor_ui: str
    text: str
    record_preferred: bool
    concept_preferred: bool
    permuted: bool


def _rows(path: Path) -> Iterator[list[str]]:
    if not path.exists():
        raise DataError(f"MeSH data file missing: {path} (run scripts/build_mesh_data.py)")
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            yield line.rstrip("\n").split("\t")


def data_digest(directory: Path | None = None) -> str:
    """A digest of the MeSH data files' contents (cache keys depend on it)."""
    return _data_digest(directory or package_data("mesh"))


@cache
def _data_digest(directory: Path) -> str:
    h = hashlib.sha256()
    for name in DATA_FILES:
        p = directory / name
        h.update(name.encode())
        h.update(p.read_bytes() if p.exists() else b"-")
    return h.hexdigest()[:24]


class TermIndex(Mapping[str, list[str]]):
    """Case-folded entry term -> descriptor UIs, kept compact.

    The sorted keys are one string and their UIs ('|'-joined) another, each with an array of
    start offsets. It reads from its cache file in milliseconds, where building a dict of its
    264k entries takes about a second; a lookup is a binary search (a few microseconds).
    """

    def __init__(self, keys: str, key_starts: array, values: str, value_starts: array) -> None:
        if not (len(key_starts) == len(value_starts) >= 1):
            raise ValueError("inconsistent term index")
        self._keys = keys
        self._ks = key_starts
        self._values = values
        self._vs = value_starts
        self._n = len(key_starts) - 1

    @classmethod
    def build(cls, pairs: Iterable[tuple[str, str]]) -> TermIndex:
        """From (entry term, descriptor UI) pairs; UIs keep their first-seen order."""
        index: dict[str, list[str]] = {}
        for text, ui in pairs:
            key = text.casefold()
            uis = index.get(key)
            if uis is None:
                index[key] = [ui]
            elif ui not in uis:
                uis.append(ui)
        keys = sorted(index)
        key_starts, value_starts = array("I", [0]), array("I", [0])
        values: list[str] = []
        k = v = 0
        for key in keys:
            joined = "|".join(index[key])
            values.append(joined)
            k += len(key)
            v += len(joined)
            key_starts.append(k)
            value_starts.append(v)
        return cls("".join(keys), key_starts, "".join(values), value_starts)

    def to_bytes(self) -> bytes:
        return marshal.dumps(
            (TERM_INDEX_FORMAT, self._keys, self._ks.tobytes(), self._values, self._vs.tobytes())
        )

    @classmethod
    def from_bytes(cls, data: bytes) -> TermIndex:
        """Raises ValueError when ``data`` is not a term index of this format."""
        try:
            fmt, keys, ks, values, vs = marshal.loads(data)
        except (EOFError, TypeError, ValueError) as exc:
            raise ValueError(f"not a term index: {exc}") from None
        if fmt != TERM_INDEX_FORMAT:
            raise ValueError(f"term index format {fmt}, expected {TERM_INDEX_FORMAT}")
        key_starts, value_starts = array("I"), array("I")
        key_starts.frombytes(ks)
        value_starts.frombytes(vs)
        if key_starts[-1] != len(keys) or value_starts[-1] != len(values):
            raise ValueError("truncated term index")
        return cls(keys, key_starts, values, value_starts)

    def _key(self, i: int) -> str:
        return self._keys[self._ks[i] : self._ks[i + 1]]

    def _find(self, key: str) -> int:
        lo, hi = 0, self._n
        keys, ks = self._keys, self._ks
        while lo < hi:
            mid = (lo + hi) // 2
            if keys[ks[mid] : ks[mid + 1]] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if lo < self._n and self._key(lo) == key else -1

    def get(self, key: str, default: Any = None) -> Any:  # type: ignore[override]
        i = self._find(key)
        return self._values[self._vs[i] : self._vs[i + 1]].split("|") if i >= 0 else default

    def __getitem__(self, key: str) -> list[str]:
        uis = self.get(key)
        if uis is None:
            raise KeyError(key)
        return uis

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self._find(key) >= 0

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        return (self._key(i) for i in range(self._n))


TERM_INDEX_PREFIX = "mesh-term-index-"


def term_index_cache(directory: Path | None = None) -> Path:
    """The cache file of the term index of the MeSH data in ``directory`` (default: shipped)."""
    key = f"{data_digest(directory)} {TERM_INDEX_FORMAT} {sys.byteorder} {array('I').itemsize}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:24]
    return data_dir() / CACHE_DIR / f"{TERM_INDEX_PREFIX}{digest}.bin"


def _write_cache(path: Path, data: bytes, prefix: str) -> None:
    """Write atomically (processes may race) and drop the files of older data or formats
    (same ``prefix``); an unwritable data directory only costs speed."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
        for old in path.parent.glob(f"{prefix}*.bin"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        tmp.unlink(missing_ok=True)


class _NameCounts:
    """Per-name character counts, for an exact upper bound on difflib's ratio (its quick_ratio)."""

    def __init__(self, names: list[str]) -> None:
        import numpy as np

        self.names = names
        codes = np.frombuffer("".join(names).encode("utf-32-le"), dtype=np.uint32)
        lengths = np.fromiter((len(n) for n in names), dtype=np.int64, count=len(names))
        self.alphabet, col = np.unique(codes, return_inverse=True)
        row = np.repeat(np.arange(len(names)), lengths)
        k = len(self.alphabet)
        flat = np.bincount(row * k + col, minlength=len(names) * k)
        self.counts = flat.reshape(len(names), k).astype(np.uint16)
        self.lengths = lengths

    def candidates(self, word: str, cutoff: float) -> list[str]:
        """Names whose ratio with ``word`` can reach ``cutoff`` (a superset of difflib's matches)."""
        import numpy as np

        wanted: dict[str, int] = {}
        for ch in word:
            wanted[ch] = wanted.get(ch, 0) + 1
        matches = np.zeros(len(self.names), dtype=np.int64)
        for ch, n in wanted.items():
            i = int(np.searchsorted(self.alphabet, ord(ch)))
            if i < len(self.alphabet) and self.alphabet[i] == ord(ch):
                matches += np.minimum(self.counts[:, i], n)
        total = self.lengths + len(word)
        # the same bound difflib computes (2 * matches / total), with a margin for rounding
        ok = 2.0 * matches >= (cutoff - 1e-9) * np.maximum(total, 1)
        return [self.names[i] for i in np.flatnonzero(ok)]


class MeshVocabulary:
    """Descriptor lookups; terms and pharmacological actions load on first use."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or package_data("mesh")
        self.descriptors: dict[str, Descriptor] = {}
        self._by_name: dict[str, str] = {}
        for ui, name, trees in _rows(self.directory / "descriptors.tsv.gz"):
            self.descriptors[ui] = Descriptor(ui, name, tuple(t for t in trees.split("|") if t))
            self._by_name[name.casefold()] = ui

    def __contains__(self, ui: str) -> bool:
        return ui in self.descriptors

    def __len__(self) -> int:
        return len(self.descriptors)

    def get(self, ui: str) -> Descriptor | None:
        return self.descriptors.get(ui)

    def by_name(self, name: str) -> Descriptor | None:
        """The descriptor whose preferred name is ``name`` (case-insensitive)."""
        ui = self._by_name.get(name.strip().casefold())
        return self.descriptors[ui] if ui else None

    @cached_property
    def _by_tree(self) -> dict[str, str]:
        return {t: d.ui for d in self.descriptors.values() for t in d.tree_numbers}

    @cached_property
    def _sorted_trees(self) -> list[str]:
        return sorted(self._by_tree)

    def by_tree(self, tree_number: str) -> Descriptor | None:
        ui = self._by_tree.get(tree_number)
        return self.descriptors[ui] if ui else None

    def resolve(self, name_or_ui: str) -> Descriptor | None:
        """A descriptor from its UI (``D003937``), preferred name or any entry term."""
        key = name_or_ui.strip()
        if key in self.descriptors:
            return self.descriptors[key]
        d = self.by_name(key)
        if d:
            return d
        uis = self.term_index.get(key.casefold())
        return self.descriptors[uis[0]] if uis else None

    def tree_descendants(self, prefix: str) -> set[str]:
        """UIs of descriptors at tree number ``prefix`` or below it."""
        trees, by_tree = self._sorted_trees, self._by_tree
        out: set[str] = set()
        i = bisect.bisect_left(trees, prefix)
        while i < len(trees):
            t = trees[i]
            if t != prefix and not t.startswith(prefix + "."):
                break
            out.add(by_tree[t])
            i += 1
        return out

    def explode(self, ui: str) -> set[str]:
        """The descriptor and all its descendants in every tree it appears in."""
        d = self.descriptors.get(ui)
        if d is None:
            return set()
        out = {ui}
        for t in d.tree_numbers:
            out |= self.tree_descendants(t)
        return out

    def suggest(self, name: str, n: int = 3, cutoff: float = 0.75) -> list[str]:
        """Close preferred names, for 'did you mean' messages (difflib's get_close_matches).

        The character-count bound leaves out only names difflib would reject, so the result is
        the same as matching against all 30k names, ~20x faster."""
        candidates = self._name_counts.candidates(name, cutoff)
        return difflib.get_close_matches(name, candidates, n=n, cutoff=cutoff)

    @cached_property
    def _name_counts(self) -> _NameCounts:
        return _NameCounts([d.name for d in self.descriptors.values()])

    @cached_property
    def terms(self) -> list[Term]:
        return [
            Term(ui, text, "R" in flags, "C" in flags, "P" in flags)
            for ui, text, flags in _rows(self.directory / "terms.tsv.gz")
        ]

    @cached_property
    def term_index(self) -> TermIndex:
        """Case-folded entry term -> descriptor UIs (a read-only mapping; ``.get`` as on a dict)."""
        path = term_index_cache(self.directory)
        try:
            return TermIndex.from_bytes(path.read_bytes())
        except (OSError, ValueError):
            pass  # no cache yet, unreadable or stale: build it
        index = TermIndex.build((text, ui) for ui, text, _ in _rows(self.directory / "terms.tsv.gz"))
        _write_cache(path, index.to_bytes(), TERM_INDEX_PREFIX)
        return index

    @cached_property
    def pharm_actions(self) -> dict[str, tuple[str, ...]]:
        acts: dict[str, list[str]] = {}
        for ui, action in _rows(self.directory / "pharm_actions.tsv.gz"):
            acts.setdefault(ui, []).append(action)
        return {k: tuple(v) for k, v in acts.items()}


@cache
def mesh() -> MeshVocabulary:
    """The shipped vocabulary, loaded once per process."""
    return MeshVocabulary()
