import difflib
import marshal
import random
from pathlib import Path

import pytest

from ebm.mesh import TERM_INDEX_PREFIX, MeshVocabulary, TermIndex, mesh, term_index_cache


def test_descriptor_lookup_by_ui_name_and_entry_term() -> None:
    m = mesh()
    assert m.get("D003937").name == "Diagnosis, Differential"
    assert m.by_name("diagnosis, differential").ui == "D003937"
    assert m.resolve("heart attack").name == "Myocardial Infarction"
    assert m.resolve("not a mesh term at all") is None


def test_top_level_descriptors_recovered_from_children() -> None:
    # Neoplasms has no row of its own in the shared trees table.
    assert mesh().by_name("Neoplasms").tree_numbers == ("C04",)


def test_explode_includes_children_only() -> None:
    m = mesh()
    fever = m.by_name("Fever").ui
    exploded = m.explode(fever)
    assert fever in exploded
    assert m.by_name("Fever of Unknown Origin").ui in exploded
    assert m.by_name("Hypothermia").ui not in exploded


def test_suggest_close_names() -> None:
    assert mesh().suggest("Diagnosis, Diferential")[0] == "Diagnosis, Differential"


# --- start-up structures: the cached entry-term index and the narrowed suggestions ---------


def test_term_index_holds_every_entry_term() -> None:
    m = mesh()
    expected: dict[str, list[str]] = {}
    for t in m.terms:
        uis = expected.setdefault(t.text.casefold(), [])
        if t.descriptor_ui not in uis:
            uis.append(t.descriptor_ui)
    index = m.term_index
    assert len(index) == len(expected) > 250_000
    assert all(index.get(k) == v for k, v in expected.items())
    assert list(index) == sorted(expected)
    assert index["heart attack"] == [m.by_name("Myocardial Infarction").ui]
    assert index.get("not a mesh term at all") is None and "not a mesh term at all" not in index
    with pytest.raises(KeyError):
        index["not a mesh term at all"]


def test_term_index_is_cached_per_mesh_data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EBM_HOME", str(tmp_path))
    path = term_index_cache()
    assert path.parent == tmp_path / "cache" and not path.exists()
    (path.parent).mkdir(parents=True)
    stale = path.parent / f"{TERM_INDEX_PREFIX}0123456789abcdef01234567.bin"
    stale.write_bytes(b"an index of older MeSH data")
    built = MeshVocabulary().term_index  # builds and writes the cache, drops the stale file
    assert path.is_file() and not stale.exists()
    assert TermIndex.from_bytes(path.read_bytes()).get("heart attack") == built.get("heart attack")
    # A later process reads the file: a planted index shows it is the one used.
    path.write_bytes(TermIndex.build([("Planted Term", "D000001")]).to_bytes())
    planted = MeshVocabulary().term_index
    assert len(planted) == 1 and planted.get("planted term") == ["D000001"]
    # A damaged file is rebuilt from the MeSH data and rewritten.
    path.write_bytes(path.read_bytes()[:-10])
    rebuilt = MeshVocabulary().term_index
    assert len(rebuilt) == len(built) and rebuilt.get("heart attack") == built.get("heart attack")
    assert len(TermIndex.from_bytes(path.read_bytes())) == len(built)


def test_term_index_rejects_other_bytes() -> None:
    for data in (b"", b"not marshal", marshal.dumps((99, "", b"", "", b""))):
        with pytest.raises(ValueError):
            TermIndex.from_bytes(data)


def test_suggest_gives_what_difflib_gives_over_all_names() -> None:
    m = mesh()
    names = [d.name for d in m.descriptors.values()]
    rng = random.Random(7)
    words = ["Diagnosis, Diferential", "Random Alocation", "Population at Risk", "xyzzy", "", "Ωmega-3"]
    for _ in range(8):
        name = rng.choice(names)
        i = rng.randrange(len(name))
        words.append(name[:i] + name[i + 1 :])  # a dropped letter
        words.append(rng.choice(names).lower()[: rng.randrange(4, 25)])  # a truncated name
    for w in words:
        assert m.suggest(w) == difflib.get_close_matches(w, names, n=3, cutoff=0.75), w
