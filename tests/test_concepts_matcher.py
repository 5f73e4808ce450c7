"""The MeSH concept index and the dictionary matcher, on real abstracts (BC5CDR, MEDLINE)."""

from __future__ import annotations

import gzip
import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

import pytest

from ebm.concepts.index import read_concepts, read_meta
from ebm.concepts.matcher import DictionaryMatcher, Stoplist, load_stoplist, load_synonyms
from ebm.concepts.rrf import MRCONSO_COLUMNS, MRSTY_COLUMNS
from ebm.concepts.umls import iter_atoms
from ebm.errors import DataError, InputError
from ebm.mesh import mesh
from ebm.resources import shipped_rules_dir
from tests.shipped import resources

ROOT = Path(__file__).resolve().parents[1]


@cache
def eval_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_bc5cdr", ROOT / "scripts" / "eval_bc5cdr.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["eval_bc5cdr"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def matcher(concept_index: Path) -> DictionaryMatcher:
    return resources().matcher


@pytest.fixture(scope="module")
def bc5cdr_dev(shared: Path) -> list:
    return eval_script().read_pubtator(shared / "concepts" / "bc5cdr" / "CDR_DevelopmentSet.PubTator.txt.gz")


@pytest.fixture(scope="module")
def bc5cdr_train(shared: Path) -> list:
    return eval_script().read_pubtator(shared / "concepts" / "bc5cdr" / "CDR_TrainingSet.PubTator.txt.gz")


def test_mesh_written_as_rrf_has_every_entry_term_and_group(concept_index: Path) -> None:
    rrf = concept_index / "rrf"
    lines = (rrf / "MRCONSO.RRF").read_text(encoding="utf-8").splitlines()
    vocab = mesh()
    assert len(lines) == len(vocab.terms)
    assert all(line.count("|") == len(MRCONSO_COLUMNS) for line in lines[:1000])
    heads = [line.split("|") for line in lines if line.split("|")[12] == "MH"]
    assert len(heads) == len(read_concepts(concept_index))  # one preferred name per descriptor
    otitis = next(h for h in heads if h[0] == "D010033")
    assert otitis[14] == "Otitis Media" and otitis[11] == "MSH" and otitis[1] == "ENG"
    permuted = sum(1 for t in vocab.terms if t.permuted)
    assert sum(1 for line in lines if "|PM|" in line) == permuted
    assert sum(1 for _ in iter_atoms(rrf, include_permuted=False)) == len(lines) - permuted
    sty = (rrf / "MRSTY.RRF").read_text(encoding="utf-8").splitlines()
    assert all(line.count("|") == len(MRSTY_COLUMNS) for line in sty)
    assert "D010361|GRUP||Persons & Population Groups|||" in sty  # Patients


def test_index_meta_and_concepts(concept_index: Path) -> None:
    meta = read_meta(concept_index)
    assert meta["source"] == "MeSH 2024" and meta["include_permuted"] is True
    concepts = read_concepts(concept_index)
    assert len(concepts) > 30_000
    assert concepts["D003920"].name == "Diabetes Mellitus" and concepts["D003920"].groups == ("DISO",)


def test_missing_index_tells_to_run_setup(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="run `ebm setup`"):
        resources().dictionary_matcher(tmp_path / "nothing")


def test_first_bc5cdr_training_abstract(matcher: DictionaryMatcher, bc5cdr_train: list) -> None:
    doc = next(d for d in bc5cdr_train if d.pmid == "227508")
    found = {(m.text, m.cui) for m in matcher.match(doc.text)}
    assert {
        ("Naloxone", "D009270"),
        ("clonidine", "D003000"),
        ("hypotensive", "D007022"),  # adjective of Hypotension
        ("spontaneously hypertensive rats", "D011918"),  # Rats, Inbred SHR: the longest match
        ("alpha-methyldopa", "D008750"),
    } <= found
    assert all(doc.text[m.start : m.end] == m.text for m in matcher.match(doc.text))


def test_matches_never_overlap_and_carry_groups(matcher: DictionaryMatcher, bc5cdr_dev: list) -> None:
    for doc in bc5cdr_dev[:100]:
        found = matcher.match(doc.text)
        for a, b in zip(found, found[1:], strict=False):
            assert a.end <= b.start, (doc.pmid, a, b)
        assert all(m.groups and m.name and m.similarity == 1.0 for m in found)


def test_longest_match_wins(matcher: DictionaryMatcher) -> None:
    found = matcher.match("Hypertensive patients with type 2 diabetes mellitus and myocardial infarction")
    assert [(m.text, m.name) for m in found] == [
        ("Hypertensive", "Hypertension"),
        ("patients", "Patients"),
        ("type 2 diabetes mellitus", "Diabetes Mellitus, Type 2"),
        ("myocardial infarction", "Myocardial Infarction"),
    ]


def test_acronym_case_is_respected(matcher: DictionaryMatcher) -> None:
    assert [m.name for m in matcher.match("AIDS")] == ["Acquired Immunodeficiency Syndrome"]
    assert "Acquired Immunodeficiency Syndrome" not in [m.name for m in matcher.match("hearing aids")]


def test_stoplist_and_synonyms_apply(matcher: DictionaryMatcher, concept_index: Path) -> None:
    names = [m.name for m in matcher.match("The drug caused toxicity; alcohol use may lead to disease.")]
    assert "Pharmaceutical Preparations" not in names  # "drug" is stoplisted
    assert "Lead" not in names
    assert "Ethanol" in names  # synonym: alcohol -> Ethanol, not Alcohols
    assert "Drug-Related Side Effects and Adverse Reactions" in names
    r = resources()
    bare = DictionaryMatcher(
        concept_index, Stoplist(frozenset(), frozenset()), [], r.value("concept_adjectives")
    )
    bare_names = [m.name for m in bare.match("The drug caused toxicity; alcohol use may lead to disease.")]
    assert {"Pharmaceutical Preparations", "Alcohols", "Lead", "Disease"} <= set(bare_names)


def test_nested_matches_on_request(concept_index: Path) -> None:
    nested = resources().dictionary_matcher(concept_index, nested={"CHEM"})
    found = nested.match("dopamine receptor blockade")
    assert [(m.text, m.nested) for m in found] == [("dopamine receptor", False), ("dopamine", True)]


def test_rule_table_errors_name_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "stop.tsv"
    bad.write_text("# header\nterm\tdrug\tok\nword\tdrug\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"stop.tsv:3: column 'kind': 'word' is not one of term"):
        load_stoplist(bad)
    bad.write_text("salt\tsodium chloride\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"stop.tsv:1: salt entries are one word"):
        load_stoplist(bad)
    bad.write_text("concept\tdrug\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"stop.tsv:1: 'drug' is not a concept ID"):
        load_stoplist(bad)
    syn = tmp_path / "syn.tsv"
    syn.write_text("alcohol\tD000431\n---\tD000431\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"syn.tsv:2: '---' has no letters or digits"):
        load_synonyms(syn)


def test_shipped_rule_tables_load(concept_index: Path) -> None:
    stop = load_stoplist(shipped_rules_dir() / "concept_stoplist.tsv")
    assert "drug" in stop.keys
    syn = dict(load_synonyms(shipped_rules_dir() / "concept_synonyms.tsv"))
    concepts = read_concepts(concept_index)
    assert all(cui in concepts for cui in syn.values())  # every synonym names a MeSH 2024 descriptor


def test_bc5cdr_dev_document_level_accuracy(matcher: DictionaryMatcher, bc5cdr_dev: list) -> None:
    """Raw text (no abbreviations): a floor well under the measured figures (docs/concepts.md)."""
    ev = eval_script()
    preds = {d.pmid: [(m.start, m.end, m.cui, m.groups) for m in matcher.match(d.text)] for d in bc5cdr_dev}
    res = ev.evaluate(bc5cdr_dev, preds)
    assert res["Disease"]["document"]["F1"] >= 0.74
    assert res["Chemical"]["document"]["F1"] >= 0.70


def test_terms_file_is_sorted_and_deduplicated(concept_index: Path) -> None:
    with gzip.open(concept_index / "terms.tsv.gz", "rt", encoding="utf-8") as f:
        rows = [tuple(line.rstrip("\n").split("\t")[:2]) for line in f]
    assert rows == sorted(set(rows))


def test_validators_for_rules_check(tmp_path: Path) -> None:
    import shutil

    from ebm.rules.check import Problem, check_directory

    rules = tmp_path / "rules"
    shutil.copytree(shipped_rules_dir(), rules, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    syn = rules / "concept_synonyms.tsv"
    syn.write_text("# note\nalcohol\tD000431\nbooze\tD999999\tnot a descriptor\n", encoding="utf-8")
    stop = rules / "concept_stoplist.tsv"
    stop.write_text("concept\tD999999\n", encoding="utf-8")
    assert check_directory(rules, remember=False).problems == [
        Problem(str(syn), 3, "D999999 is not a MeSH 2024 descriptor UI"),
        Problem(str(stop), 1, "D999999 is not a MeSH 2024 descriptor UI"),
    ]


def test_adjective_entries_block_only_the_singular(matcher: DictionaryMatcher) -> None:
    found = [(m.text, m.name) for m in matcher.match("anticholinergic effects of anticholinergics")]
    assert found == [("anticholinergics", "Cholinergic Antagonists")]
    assert [m.name for m in matcher.match("anticholinergic agents")] == ["Cholinergic Antagonists"]


def test_salt_word_after_a_chemical_is_part_of_its_name(
    matcher: DictionaryMatcher, bc5cdr_train: list
) -> None:
    # BC5CDR training abstract 220563: "Perhexiline maleate ..." is the drug, not also Maleates.
    doc = next(d for d in bc5cdr_train if d.pmid == "220563")
    first = [(m.text, m.name) for m in matcher.match(doc.text) if m.start < 20]
    assert first == [("Perhexiline maleate", "Perhexiline")]
    found = [(m.text, m.name) for m in matcher.match("morphine sulfate, sodium intake and sodium chloride")]
    assert found == [
        ("morphine sulfate", "Morphine"),
        ("sodium", "Sodium"),
        ("sodium chloride", "Sodium Chloride"),
    ]
    # after a word that is no chemical the salt word is itself
    assert [m.name for m in matcher.match("plasma potassium")] == ["Plasma", "Potassium"]


def test_no_term_starts_on_a_hyphen_glued_participle(matcher: DictionaryMatcher) -> None:
    found = [(m.text, m.name) for m in matcher.match("clonidine-induced hypotension")]
    assert found == [("clonidine", "Clonidine"), ("hypotension", "Hypotension")]
    assert [m.name for m in matcher.match("induced hypotension")] == ["Hypotension, Controlled"]


def test_bc5cdr_chemical_scope_conventions(matcher: DictionaryMatcher, bc5cdr_train: list) -> None:
    """Drug classes named by their action (D27 only) and proteins are not counted as Chemical
    predictions by default; --scope classes counts the classes, --scope all everything. The
    gold is the same in all three."""
    ev = eval_script()
    analgesics, albumin, morphine = "D000700", "D012709", "D009020"  # D27 only; D12.776 only; a drug
    assert not ev.in_scope(analgesics, "Chemical", "bc5cdr") and ev.in_scope(
        analgesics, "Chemical", "classes"
    )
    assert not ev.is_protein(analgesics) and ev.is_protein(albumin)
    assert not ev.in_scope(albumin, "Chemical", "bc5cdr") and not ev.in_scope(albumin, "Chemical", "classes")
    assert all(ev.in_scope(morphine, "Chemical", s) for s in ev.SCOPES)
    assert all(ev.in_scope(c, "Chemical", "all") for c in (analgesics, albumin))
    assert ev.in_scope(analgesics, "Disease", "bc5cdr")  # scopes are about Chemical predictions only
    docs = bc5cdr_train[:200]
    preds = {d.pmid: [(m.start, m.end, m.cui, m.groups) for m in matcher.match(d.text)] for d in docs}
    res = {s: ev.evaluate(docs, preds, scope=s)["Chemical"]["document"] for s in ev.SCOPES}
    gold = {s: r["TP"] + r["FN"] for s, r in res.items()}
    assert len(set(gold.values())) == 1  # the gold never changes
    assert res["bc5cdr"]["FP"] < res["classes"]["FP"] < res["all"]["FP"]
    assert res["bc5cdr"]["P"] > res["classes"]["P"]
