"""``ebm setup --umls DIR`` on a small RRF fixture; QuickUMLS offline; no network call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ebm.cli import main
from ebm.concepts.groups import UmlsGroups
from ebm.concepts.index import build_umls_index as build_index
from ebm.concepts.index import load_stopwords, read_concepts, read_lookup, read_meta
from ebm.concepts.matcher import DictionaryMatcher, QuickUMLSMatcher, Stoplist
from ebm.concepts.umls import iter_atoms, read_groups
from ebm.errors import DataError
from ebm.resources import shipped_rules_dir
from tests import netguard

ROOT = Path(__file__).resolve().parents[1]
FIXTURE_RRF = ROOT / "tests" / "fixtures" / "umls"
NO_STOPLIST = Stoplist(frozenset(), frozenset())
STOPWORDS = load_stopwords(shipped_rules_dir() / "stopwords_en.txt")


def build_umls_index(rrf: Path, out: Path, **options: object) -> object:
    """With the shipped group table and stopwords."""
    groups = UmlsGroups.load(shipped_rules_dir() / "umls_semantic_groups.tsv")
    return build_index(rrf, out, groups, STOPWORDS, **options)  # type: ignore[arg-type]


TEXT = "Amoxycilin for middle ear inflammation in children: treatment of otitis media and hypoacusis"


@pytest.fixture(scope="module")
def umls_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("umls") / "concepts"
    build_umls_index(FIXTURE_RRF, out)
    return out


def test_reader_keeps_english_unsuppressed_rows() -> None:
    texts = [a.text for a in iter_atoms(FIXTURE_RRF)]
    assert "Otite moyenne" not in texts  # French
    assert "Tympanitis" not in texts  # SUPPRESS=O
    assert "Diarrhoea" not in texts  # SUPPRESS=E
    assert "Media, Otitis" in texts  # permuted, kept by default
    assert "Media, Otitis" not in [a.text for a in iter_atoms(FIXTURE_RRF, include_permuted=False)]
    assert [a.text for a in iter_atoms(FIXTURE_RRF, sources=frozenset({"RXNORM"}))] == ["amoxicillin"]
    preferred = {a.cui: a.text for a in iter_atoms(FIXTURE_RRF) if a.preferred}
    assert preferred["C0029882"] == "Otitis Media"


def test_groups_come_from_semantic_types() -> None:
    groups = read_groups(FIXTURE_RRF, UmlsGroups.load(shipped_rules_dir() / "umls_semantic_groups.tsv"))
    assert groups["C0029882"] == ("DISO",)
    assert groups["C0002645"] == ("CHEM",)  # Antibiotic and Organic Chemical: one group
    assert groups["C0008059"] == ("GRUP",)  # Age Group
    assert groups["C0030705"] == ("GRUP",)  # Patient or Disabled Group
    assert groups["C0087111"] == ("PROC",)
    assert "C9999999" not in groups  # T999 is in no group


def test_index_built_from_umls(umls_index: Path) -> None:
    meta = read_meta(umls_index)
    assert meta["source"].startswith("UMLS") and meta["quickumls"] is True
    concepts = read_concepts(umls_index)
    assert concepts["C0029882"].name == "Otitis Media"
    assert concepts["C9999999"].groups == ()
    entries = read_lookup(umls_index)["entries"]
    assert "otitis media disorder" not in entries  # SNOMED CT semantic tag stripped
    assert entries["otitis media"] == ("C0029882",)


def test_dictionary_matcher_on_umls_index(umls_index: Path) -> None:
    from tests.shipped import resources

    r = resources()  # shipped synonyms name MeSH IDs: ignored
    m = DictionaryMatcher(umls_index, NO_STOPLIST, r.value("concept_synonyms"), r.value("concept_adjectives"))
    found = [(x.text, x.cui, x.groups) for x in m.match(TEXT)]
    assert found == [
        ("middle ear inflammation", "C0029882", ("DISO",)),
        ("children", "C0008059", ("GRUP",)),
        ("treatment", "C0087111", ("PROC",)),
        ("otitis media", "C0029882", ("DISO",)),
        ("hypoacusis", "C0018772", ("DISO",)),
    ]


def test_quickumls_matcher_finds_approximate_matches(umls_index: Path) -> None:
    q = QuickUMLSMatcher(umls_index, NO_STOPLIST, STOPWORDS, threshold=0.7)
    found = {x.text: x for x in q.match(TEXT)}
    assert found["Amoxycilin"].cui == "C0002645" and 0.7 <= found["Amoxycilin"].similarity < 1
    assert found["otitis media"].similarity == 1.0 and found["otitis media"].groups == ("DISO",)
    strict = QuickUMLSMatcher(umls_index, NO_STOPLIST, STOPWORDS, threshold=1.0)
    assert "Amoxycilin" not in {x.text for x in strict.match(TEXT)}


def test_quickumls_needs_its_part_of_the_index(tmp_path: Path) -> None:
    build_umls_index(FIXTURE_RRF, tmp_path / "c", with_quickumls=False)
    with pytest.raises(DataError, match="without QuickUMLS"):
        QuickUMLSMatcher(tmp_path / "c", NO_STOPLIST, STOPWORDS)


def test_bad_release_is_reported(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="MRSTY.RRF not found"):
        build_umls_index(tmp_path, tmp_path / "out")
    (tmp_path / "MRSTY.RRF").write_text("C1|T047|B|Disease or Syndrome||256|\n")
    (tmp_path / "MRCONSO.RRF").write_text("C1|ENG|P|L1\n")
    with pytest.raises(DataError, match=r"MRCONSO.RRF:1: expected 18 '\|'-separated fields, found 4"):
        build_umls_index(tmp_path, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing half-built left behind


def test_setup_and_matching_under_the_network_guard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """The whole path (CLI setup with the QuickUMLS part, both matchers) with sockets refused."""
    before = len(netguard.attempts)
    monkeypatch.setenv("EBM_HOME", str(tmp_path))
    assert main(["setup", "--umls", str(FIXTURE_RRF), "--quiet"]) == 0
    assert "8 concepts" in capsys.readouterr().out
    assert main(["concepts", TEXT, "--json", "--matcher", "quickumls", "--threshold", "0.7"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {c["cui"] for c in out["concepts"]} >= {"C0002645", "C0029882", "C0008059"}
    assert main(["concepts", TEXT, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["concepts"]
    assert netguard.attempts[before:] == []


SCRIPT = """
import json, sys
from pathlib import Path
from tests import netguard
netguard.install()
from ebm.concepts.groups import UmlsGroups
from ebm.concepts.index import build_umls_index, load_stopwords
from ebm.concepts.matcher import Stoplist
from ebm.resources import shipped_rules_dir
out = Path(sys.argv[1])
stop = load_stopwords(shipped_rules_dir() / "stopwords_en.txt")
groups = UmlsGroups.load(shipped_rules_dir() / "umls_semantic_groups.tsv")
build_umls_index(Path(sys.argv[2]), out, groups, stop)
error = None
try:
    if sys.argv[3] == "ours":
        from ebm.concepts.matcher import QuickUMLSMatcher
        matcher = QuickUMLSMatcher(out, Stoplist(frozenset(), frozenset()), stop)
        found = [m.cui for m in matcher.match("otitis media in children")]
    else:  # QuickUMLS as shipped, on the same index
        from quickumls import QuickUMLS
        found = [g[0]["cui"] for g in QuickUMLS(str(out / "quickumls")).match("otitis media")]
except Exception as exc:
    found, error = [], type(exc).__name__
print(json.dumps({"attempts": netguard.attempts, "found": found, "error": error}))
"""


def _fresh_process(tmp_path: Path, which: str) -> dict:
    """Run in a new interpreter, so nothing loaded by other tests (NLTK corpora) hides a download."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "EBM_HOME": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "idx"), str(FIXTURE_RRF), which],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_guard_saw_no_network_attempt_in_a_fresh_process(tmp_path: Path) -> None:
    result = _fresh_process(tmp_path, "ours")
    assert result == {"attempts": [], "found": ["C0029882", "C0008059"], "error": None}


def test_guard_does_see_quickumls_as_shipped_try_to_download(tmp_path: Path) -> None:
    """The check above can fail: QuickUMLS's own constructor downloads NLTK stopwords."""
    result = _fresh_process(tmp_path, "shipped")
    assert result["attempts"], result
    assert result["error"] is not None
