"""Build and load the concept index (offline) in the data directory.

Layout of ``<data dir>/concepts`` (``index_dir()``):
- ``meta.json``: source, options, counts, build time, format version;
- ``concepts.tsv.gz``: concept ID, preferred name, semantic groups ('|');
- ``terms.tsv.gz``: normalised key (``ebm.concepts.normalize``), concept ID, rank
  (0 preferred name, 1 concept-preferred term, 2 other entry term, 3 permuted term);
- ``quickumls/``: the QuickUMLS index of the same strings (simstring + unqlite), with the
  stopword list QuickUMLS reads in place of NLTK's download (``nltk_data/``);
- ``rrf/``: the MeSH vocabulary written as MRCONSO.RRF / MRSTY.RRF (MeSH builds only).

A build writes into a temporary sibling directory and renames it over the old index at the
end, so an interrupted ``ebm setup`` leaves the previous index usable.
"""

from __future__ import annotations

import gzip
import json
import marshal
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ebm.concepts.groups import DISORDERS, MeshGroups, UmlsGroups
from ebm.concepts.normalize import adjective_keys, term_keys
from ebm.concepts.umls import Atom, iter_atoms, read_groups, release_file
from ebm.errors import DataError, InputError
from ebm.mesh import Descriptor, MeshVocabulary
from ebm.paths import data_dir
from ebm.rules.table import Table, load, text

FORMAT_VERSION = 2
LOOKUP_FILE = "lookup.marshal"
PREFERRED_TTYS = frozenset({"MH", "PEP", "PT", "PN", "PTN", "PTGB"})


def index_dir() -> Path:
    return data_dir() / "concepts"


STOPWORD_COLUMNS = (text("word", help="one lower-case word"),)
_STOPWORD = re.compile(r"^[a-z][a-z']*$")


def stopwords_from_table(table: Table) -> frozenset[str]:
    """``rules/stopwords_en.txt``: one lower-case word a line, ``#`` comments."""
    words = []
    for row in table:
        w = row["word"]
        if not _STOPWORD.match(w):
            raise InputError(f"{table.where(row)}: {w!r} is not a lower-case word (letters and apostrophes)")
        words.append(w)
    return frozenset(words)


def load_stopwords(path: Path) -> frozenset[str]:
    return stopwords_from_table(load(path, STOPWORD_COLUMNS))


_SEMANTIC_TAG = re.compile(r"\s+\([a-z][a-z /&-]+\)$")


def _strip_tag(atom: Atom) -> str:
    """SNOMED CT strings end in a semantic tag, "Otitis media (disorder)": not matchable text."""
    if atom.sab.startswith("SNOMEDCT"):
        return _SEMANTIC_TAG.sub("", atom.text)
    return atom.text


def atom_rank(atom: Atom) -> int:
    if atom.preferred:
        return 0
    if atom.tty in PREFERRED_TTYS:
        return 1
    if atom.tty == "PM":
        return 3
    return 2


def usable_key(key: str, stop: frozenset[str]) -> bool:
    """False for keys that would only produce noise: all stopwords, all digits, or one short
    lowercase token ("ca" the abbreviation of circa is not calcium; "Ca" keeps its case)."""
    toks = key.split(" ")
    if all(t.lower() in stop or t.isdigit() for t in toks):
        return False
    if len(toks) == 1:
        t = toks[0]
        if len(t) < 2 or (len(t) < 3 and t.islower()):
            return False
    return True


@dataclass
class BuildStats:
    source: str
    strings: int = 0
    concepts: int = 0
    keys: int = 0
    seconds: float = 0.0
    bytes: int = 0
    include_permuted: bool = True
    quickumls: bool = True
    extra: dict[str, Any] = field(default_factory=dict)


def _write_gz(path: Path, lines: Iterator[str]) -> None:
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=6) as gz:
        for line in lines:
            gz.write(line.encode("utf-8"))


def build_index(
    rrf_dir: Path,
    out_dir: Path,
    *,
    source: str,
    include_permuted: bool = True,
    with_quickumls: bool = True,
    languages: frozenset[str] = frozenset({"ENG"}),
    sources: frozenset[str] | None = None,
    progress: Callable[[int], None] | None = None,
    keep_rrf: bool = False,
    general: GeneralNames | None = None,
    stopwords: frozenset[str],
    umls_groups: UmlsGroups | None = None,
) -> BuildStats:
    """Index the release in ``rrf_dir`` into ``out_dir`` (replaced atomically); ``keep_rrf``
    moves ``rrf_dir`` into the index (for the MeSH release written by setup); ``general``
    gives extra keys for general names the vocabulary lacks (``general_names``); ``stopwords``:
    rules/stopwords_en.txt; ``umls_groups``: rules/umls_semantic_groups.tsv (None: the groups
    are named in MRSTY.RRF already, as in the MeSH release setup writes)."""
    t0 = time.perf_counter()
    stats = BuildStats(source=source, include_permuted=include_permuted, quickumls=with_quickumls)
    groups = read_groups(rrf_dir, umls_groups)
    stop = stopwords
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".concepts-build-", dir=out_dir.parent))
    try:
        names: dict[str, str] = {}
        named_by_preferred: set[str] = set()
        keys: dict[str, dict[str, int]] = {}
        ss_db = cui_db = None
        if with_quickumls:
            ss_db, cui_db = _quickumls_writers(tmp / "quickumls", stop)
        seen_strings: set[str] = set()
        qu_seen: set[tuple[str, str]] = set()
        for atom in iter_atoms(rrf_dir, languages, sources, include_permuted, progress):
            stats.strings += 1
            if atom.cui not in names or (atom.preferred and atom.cui not in named_by_preferred):
                names[atom.cui] = atom.text
                if atom.preferred:
                    named_by_preferred.add(atom.cui)
            rank = atom_rank(atom)
            for key in term_keys(_strip_tag(atom)):
                if not usable_key(key, stop):
                    continue
                per = keys.setdefault(key, {})
                if rank < per.get(atom.cui, 99):
                    per[atom.cui] = rank
            if ss_db is not None and cui_db is not None:
                lowered = atom.text.lower()
                if (atom.cui, lowered) not in qu_seen:
                    qu_seen.add((atom.cui, lowered))
                    if lowered not in seen_strings:
                        seen_strings.add(lowered)
                        ss_db.insert(lowered)
                    cui_db.insert(lowered, atom.cui, list(groups.get(atom.cui, ())), int(atom.preferred))
        if not names:
            raise DataError(f"no usable English rows in {release_file(rrf_dir, 'MRCONSO.RRF')}")
        stats.concepts = len(names)
        stats.keys = len(keys)
        _write_gz(
            tmp / "concepts.tsv.gz",
            (f"{cui}\t{name}\t{'|'.join(groups.get(cui, ()))}\n" for cui, name in sorted(names.items())),
        )
        _write_gz(
            tmp / "terms.tsv.gz",
            (f"{k}\t{cui}\t{rank}\n" for k, per in sorted(keys.items()) for cui, rank in sorted(per.items())),
        )
        extra = general(set(keys), groups) if general is not None else {}
        stats.extra["general_names"] = len(extra)
        _write_lookup(tmp / LOOKUP_FILE, keys, names, groups, extra)
        del ss_db, cui_db  # close the QuickUMLS databases before moving them
        if keep_rrf:
            shutil.move(str(rrf_dir), str(tmp / "rrf"))
        stats.seconds = time.perf_counter() - t0
        stats.bytes = sum(p.stat().st_size for p in tmp.rglob("*") if p.is_file())
        meta = {
            "format": FORMAT_VERSION,
            "source": source,
            "rrf": str(rrf_dir),
            "include_permuted": include_permuted,
            "quickumls": with_quickumls,
            "strings": stats.strings,
            "concepts": stats.concepts,
            "keys": stats.keys,
            "build_seconds": round(stats.seconds, 1),
            "bytes": stats.bytes,
            "built": time.strftime("%Y-%m-%dT%H:%M:%S"),
        }
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        _replace_dir(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return stats


def _write_lookup(
    path: Path,
    keys: dict[str, dict[str, int]],
    names: dict[str, str],
    groups: dict[str, tuple[str, ...]],
    general: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """What the dictionary matcher loads, ready to use (marshal loads it in a fraction of a
    second, where parsing terms.tsv.gz takes seconds): key -> concept IDs of the key's best
    rank; adjective keys of one-word disorder names; general names (``general_names``);
    concept -> (name, groups)."""
    entries: dict[str, tuple[str, ...]] = {}
    for key, per in keys.items():
        best = min(per.values())
        entries[key] = tuple(sorted(c for c, r in per.items() if r == best))
    adjectives: dict[str, list[str]] = {}
    for key, cuis in entries.items():
        diso = [c for c in cuis if DISORDERS in groups.get(c, ())]
        for adj in adjective_keys(key) if diso else ():
            if adj not in entries:
                known = adjectives.setdefault(adj, [])
                known.extend(c for c in diso if c not in known)
    data = {
        "format": FORMAT_VERSION,
        "entries": entries,
        "adjectives": {k: tuple(v) for k, v in adjectives.items()},
        "general": dict(general or {}),
        "concepts": {cui: (name, groups.get(cui, ())) for cui, name in names.items()},
    }
    path.write_bytes(marshal.dumps(data))


def read_lookup(directory: Path) -> dict[str, Any]:
    path = directory / LOOKUP_FILE
    try:
        data = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError) as exc:
        raise DataError(
            f"concept index at {directory} is damaged ({path.name}: {exc}): run `ebm setup`"
        ) from exc
    if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
        raise DataError(f"concept index at {directory} is from another ebm version: run `ebm setup` again")
    return data


def _replace_dir(new: Path, target: Path) -> None:
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}-old-{os.getpid()}")
        target.rename(old)
    new.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _quickumls_writers(path: Path, stop: frozenset[str]) -> tuple[Any, Any]:
    """QuickUMLS's own database writers, with the flag files its constructor reads."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # quickumls_simstring imports `imp`
        from quickumls.toolbox import CuiSemTypesDB, SimstringDBWriter

    (path / "umls-simstring.db").mkdir(parents=True)
    (path / "cui-semtypes.db").mkdir()
    (path / "lowercase.flag").write_text("")
    (path / "language.flag").write_text("ENG")
    (path / "database_backend.flag").write_text("unqlite")
    corpus = path / "nltk_data" / "corpora" / "stopwords"
    corpus.mkdir(parents=True)
    (corpus / "english").write_text("\n".join(sorted(stop)) + "\n", encoding="utf-8")
    return (
        SimstringDBWriter(str(path / "umls-simstring.db")),
        CuiSemTypesDB(str(path / "cui-semtypes.db"), database_backend="unqlite"),
    )


def read_meta(directory: Path) -> dict[str, Any]:
    path = directory / "meta.json"
    if not path.exists():
        raise DataError(f"no concept index at {directory}: run `ebm setup` first")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT_VERSION:
        raise DataError(
            f"concept index at {directory} has format {meta.get('format')}, this ebm needs "
            f"{FORMAT_VERSION}: run `ebm setup` again"
        )
    return meta


@dataclass(frozen=True)
class ConceptInfo:
    cui: str
    name: str
    groups: tuple[str, ...]


def read_concepts(directory: Path) -> dict[str, ConceptInfo]:
    out: dict[str, ConceptInfo] = {}
    with gzip.open(directory / "concepts.tsv.gz", "rt", encoding="utf-8") as f:
        for line in f:
            cui, name, groups = line.rstrip("\n").split("\t")
            out[cui] = ConceptInfo(cui, name, tuple(groups.split("|")) if groups else ())
    return out


# (present keys, concept -> groups) -> extra key -> concept IDs, best first
GeneralNames = Callable[[set[str], dict[str, tuple[str, ...]]], dict[str, tuple[str, ...]]]


def general_names(
    vocab: MeshVocabulary, present: set[str], groups: dict[str, tuple[str, ...]], stop: frozenset[str]
) -> dict[str, tuple[str, ...]]:
    """Keys for general disorder names that MeSH only has as the head of inverted names.

    MeSH names kinds of a thing "Head, Kind" ("Lupus Erythematosus, Systemic", "Angina,
    Unstable") and sometimes has no descriptor named "Head" alone. When the head is not a
    vocabulary key and heads the names of two or more disorder descriptors, the head names:
    - their parent, when one descriptor is an ancestor of all of them in the tree and its
      name contains the head's words ("angina" -> Angina Pectoris, "fracture" -> Fractures,
      Bone);
    - else, of those not below another one in the tree, the most general (most descendants,
      then most names), with the others as alternatives ("lupus erythematosus" -> Lupus
      Erythematosus, Systemic, alternative Lupus Erythematosus, Cutaneous; "abortion" ->
      Abortion, Spontaneous, alternative Abortion, Threatened).
    Category roots (Pathological Conditions, Signs and Symptoms) are never chosen.
    """
    heads: dict[str, list[Descriptor]] = {}
    for d in vocab.descriptors.values():
        if ", " not in d.name or DISORDERS not in groups.get(d.ui, ()):
            continue
        if not d.tree_numbers or all("." not in t for t in d.tree_numbers):
            continue
        keys = term_keys(d.name.split(", ", 1)[0])
        if keys and keys[0] not in present and usable_key(keys[0], stop):
            heads.setdefault(keys[0], []).append(d)
    # names per descriptor (not permuted): MeSH lists more for the concept in common use
    names: dict[str, int] = {}
    for t in vocab.terms:
        if not t.permuted:
            names[t.descriptor_ui] = names.get(t.descriptor_ui, 0) + 1
    out: dict[str, tuple[str, ...]] = {}
    for key, ds in sorted(heads.items()):
        if len(ds) < 2:
            continue
        parent = _common_parent(vocab, ds, key)
        if parent is not None:
            out[key] = (parent.ui,)
            continue

        roots = [d for d in ds if not any(o is not d and _under(d, o) for o in ds)]
        best = sorted(roots, key=lambda d: (-len(vocab.explode(d.ui)), -names.get(d.ui, 0), d.ui))
        out[key] = tuple(d.ui for d in best)
    return out


def _under(d: Descriptor, other: Descriptor) -> bool:
    """Whether ``d`` is below ``other`` in one of the trees."""
    return any(t.startswith(o + ".") for t in d.tree_numbers for o in other.tree_numbers)


def _common_parent(vocab: MeshVocabulary, ds: list[Descriptor], key: str) -> Descriptor | None:
    """The deepest descriptor that is (or is an ancestor of) every one of ``ds`` and whose
    name has all the words of ``key``; None if there is none."""
    words = set(key.split(" "))

    def ancestors(d: Descriptor) -> set[str]:
        return {t[:i] for t in d.tree_numbers for i in range(len(t) + 1) if i == len(t) or t[i] == "."}

    common = set.intersection(*(ancestors(d) for d in ds))
    for tree in sorted(common, key=lambda t: -t.count(".")):
        p = vocab.by_tree(tree)
        if p is None or "." not in tree:
            continue
        if words <= set(" ".join(term_keys(p.name)).split(" ")):
            return p
    return None


def build_mesh_index(
    out_dir: Path,
    vocabulary: MeshVocabulary,
    groups: MeshGroups,
    stopwords: frozenset[str],
    *,
    include_permuted: bool = True,
    with_quickumls: bool = True,
    progress: Callable[[int], None] | None = None,
    source: str = "MeSH 2024",
) -> BuildStats:
    """Write ``vocabulary`` (the shipped MeSH 2024, or a subset named by ``source``) as RRF and
    index it (``ebm setup``); ``groups`` and ``stopwords``: rules/semantic_groups.tsv and
    rules/stopwords_en.txt."""
    from ebm.concepts.rrf import write_mesh_rrf

    out_dir.parent.mkdir(parents=True, exist_ok=True)
    rrf = Path(tempfile.mkdtemp(prefix=".mesh-rrf-", dir=out_dir.parent))
    try:
        write_mesh_rrf(rrf, vocabulary, groups)
        return build_index(
            rrf,
            out_dir,
            source=source,
            include_permuted=include_permuted,
            with_quickumls=with_quickumls,
            progress=progress,
            keep_rrf=True,
            general=lambda keys, found: general_names(vocabulary, keys, found, stopwords),
            stopwords=stopwords,
        )
    finally:
        shutil.rmtree(rrf, ignore_errors=True)


def build_umls_index(
    umls_dir: Path,
    out_dir: Path,
    groups: UmlsGroups,
    stopwords: frozenset[str],
    *,
    include_permuted: bool = True,
    with_quickumls: bool = True,
    sources: frozenset[str] | None = None,
    progress: Callable[[int], None] | None = None,
) -> BuildStats:
    """Index a licensed UMLS release (``ebm setup --umls DIR``); ``groups``:
    rules/umls_semantic_groups.tsv."""
    if not umls_dir.is_dir():
        raise DataError(f"UMLS directory not found: {umls_dir}")
    return build_index(
        umls_dir,
        out_dir,
        source=f"UMLS ({umls_dir})",
        stopwords=stopwords,
        umls_groups=groups,
        include_permuted=include_permuted,
        with_quickumls=with_quickumls,
        sources=sources,
        progress=progress,
    )


def count_rrf_rows(rrf_dir: Path) -> int:
    """Rows of MRCONSO.RRF (for a progress bar); 0 when it is compressed."""
    from ebm.concepts.umls import count_lines

    path = release_file(rrf_dir, "MRCONSO.RRF")
    return 0 if path.suffix == ".gz" else count_lines(path)
