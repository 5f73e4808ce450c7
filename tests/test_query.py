"""Query formulation and relaxation, run on real citations: the bundled corpus in a local store
(the PubMed dialect the store parses with ``ebm.query_syntax``), and the shared parser's check of
the minimal subset that ``rules/clinical_queries.tsv`` keeps beside each PubMed filter.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.errors import InputError
from ebm.frame import Frame, Task, load_frame, load_frames
from ebm.query import (
    LADDER,
    alternatives,
    fold,
    formulate,
    ladder,
    retrieve,
    units,
)
from ebm.query_syntax import QuerySyntaxError, require_subset
from ebm.source import SearchResult
from ebm.store import MedlineStore
from tests.test_store import bundled_store

ROOT = Path(__file__).resolve().parents[1]


def _resources() -> tuple[object, object]:
    """The shipped rule set and MeSH vocabulary, passed explicitly to the query builder."""
    try:
        from ebm.resources import Resources
    except ImportError:  # before the Resources object lands (issue 11)
        from ebm.mesh import mesh
        from ebm.rules import load_rules  # type: ignore[attr-defined]

        return load_rules(), mesh()
    r = Resources.load()
    return r.rules, r.vocabulary


RULES, VOC = _resources()
KW = {"rules": RULES, "vocabulary": VOC}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MedlineStore]:
    """The bundled corpus in a store, built as the default store is (shared: tests.test_store)."""
    yield from bundled_store(tmp_path_factory)


@pytest.fixture(scope="module")
def frames(shared: Path) -> list[Frame]:
    return load_frames([ROOT / "questions", shared / "bench" / "frames"])


@pytest.fixture(scope="module")
def fever() -> Frame:
    return load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")


# --- formulation ------------------------------------------------------------------------


def test_fever_question_as_a_query(fever: Frame) -> None:
    q = formulate(fever, dialect="pubmed", **KW)
    narrow = RULES.clinical_queries.get("therapy", "narrow").pubmed  # type: ignore[attr-defined]
    assert q == (
        "(acute[tiab] AND febrile[tiab] AND illness[tiab])"
        ' AND ("Acetaminophen"[mh] OR acetaminophen[tiab])'
        ' AND ("Ibuprofen"[mh] OR ibuprofen[tiab])'
        ' AND ("Child"[mh] OR children[tiab] OR child[tiab])'
        f" AND {narrow} AND hasabstract AND English[la] AND humans[mh]"
    )
    local = formulate(fever, dialect="local", **KW)
    assert local.endswith(f"AND {narrow} AND hasabstract) NOT (animals[mh] NOT humans[mh])")
    with pytest.raises(ValueError, match="unknown dialect 'subset'"):  # dropped: nothing used it
        formulate(fever, dialect="subset", **KW)


def test_every_frame_and_relaxation_runs_on_the_store(frames: list[Frame], store: MedlineStore) -> None:
    assert len(frames) >= 29
    names = [name for name, _ in LADDER]
    for frame in frames:
        steps = ladder(frame, dialect="local", **KW)
        assert steps[0][1] == ()
        for query, relaxations in steps:
            store.translate(query)  # the store's parser takes every query the ladder writes
            assert list(relaxations) == sorted(relaxations, key=names.index)
        for (_, before), (_, after) in zip(steps, steps[1:], strict=False):
            assert after[:-1] == before  # one relaxation at a time, cumulatively


def test_the_subset_column_stays_in_the_subset() -> None:
    """``ebm rules check`` parses the SUBSET column of clinical_queries.tsv with the shared parser."""
    rows = RULES.clinical_queries.rows  # type: ignore[attr-defined]
    assert len(rows) == 10
    outside = 0
    for r in rows:
        require_subset(r.subset)
        try:
            require_subset(r.pubmed)
        except QuerySyntaxError:
            outside += 1  # PubMed's own filters use truncation, :noexp, long tags
    assert outside == 9  # all but clinical_prediction_guides narrow, which is the same in both


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("random*[tiab]", "truncation (random*)"),
        ("therapeutic use[sh]", "field tag [sh] at position 1 is not in the query subset"),
        ("randomized[Title/Abstract]", "write [tiab]"),
        ("diagnosis[mh:noexp]", "[mh:noexp] at position 1 is not in the query subset"),
        ("(a[tiab] OR b[tiab]", "'(' at position 1 is never closed"),
        ("a[tiab])", "')' at position 8 has no matching '('"),
        ('"a b[tiab]', "unterminated quote"),
        ("a[tiab] AND", "operator AND at position 9 has no term after it"),
        ("OR a[tiab]", "operator OR at position 1 has no term before it"),
        ("abc[dp]", "[dp] at position 1 takes a year"),
        ("", "empty query"),
    ],
)
def test_subset_check_names_the_part(query: str, expected: str) -> None:
    with pytest.raises(QuerySyntaxError) as e:
        require_subset(query)
    assert expected in str(e.value)


def test_slot_units_and_alternatives() -> None:
    got = [
        (u.text, u.descriptor) for u in units("retinal detachment with proliferative vitreoretinopathy", VOC)
    ]
    assert got == [
        ("retinal detachment", "Retinal Detachment"),
        ("proliferative vitreoretinopathy", "Vitreoretinopathy, Proliferative"),
    ]
    assert [(u.text, u.descriptor) for u in units("elderly patients", VOC)] == [("elderly", "Aged")]
    assert [(u.text, u.descriptor) for u in units("gastroesophageal reflux disease", VOC)] == [
        ("gastroesophageal reflux disease", "Gastroesophageal Reflux")
    ]
    assert [u.descriptor for u in units("suspected acute appendicitis", VOC)] == [None, "Appendicitis"]
    assert alternatives("wheezing / asthma") == ["wheezing", "asthma"]
    assert alternatives("acetaminophen or ibuprofen, aspirin") == ["acetaminophen", "ibuprofen", "aspirin"]
    assert units("adults 18 years", VOC)[0].descriptor == "Adult" and len(units("adults 18 years", VOC)) == 1


# --- words as the store reads them (issue 12: accents and typographic marks were dropped) -------


@pytest.mark.parametrize(
    ("problem", "heading", "words"),
    [
        ("Guillain–Barré syndrome", "Guillain-Barre Syndrome", "Guillain-Barre syndrome"),
        ("Sjögren syndrome", "Sjogren's Syndrome", "Sjogren syndrome"),
        ("Ménière disease", "Meniere Disease", "Meniere disease"),
        ("Behçet disease", "Behcet Syndrome", "Behcet disease"),
        ("Crohn’s disease", "Crohn Disease", "Crohn's disease"),
    ],
)
def test_accented_problems_search_their_mesh_heading(
    problem: str, heading: str, words: str, store: MedlineStore
) -> None:
    frame = Frame(Task.THERAPY, problem=problem)
    q = formulate(frame, dialect="local", **KW)
    assert q.startswith(f'(("{heading}"[mh] OR "{words}"[tiab]') and 'Syndrome"[mh] OR syndrome' not in q
    assert [(u.text, u.descriptor) for u in units(problem, VOC)] == [(words, heading)]
    loosest = ladder(frame, dialect="local", **KW)[-1][0]
    hits = store.search_hits(loosest, limit=1000)
    assert hits.count > 0
    d = VOC.by_name(heading)  # type: ignore[attr-defined]
    narrower = {VOC.descriptors[u].name for u in VOC.explode(d.ui)}  # type: ignore[attr-defined]

    def norm(text: str) -> str:
        return " " + " ".join(re.findall(r"[a-z0-9]+", fold(text).casefold().replace("'s", ""))) + " "

    for c in store.fetch([h.pmid for h in hits.hits]):  # every hit is about the named disease
        names = {h.descriptor_name for h in c.mesh_headings or ()}
        text = norm(f"{c.title} {c.abstract_text}")
        eponym = norm(words).split()[0]  # guillain, sjogren, meniere, behcet, crohn
        assert names & narrower or f" {eponym} " in text, c.pmid


def test_words_keep_their_letters_and_are_folded_as_the_store_folds_them(store: MedlineStore) -> None:
    frame = Frame(Task.THERAPY, problem="fièvre", intervention=("ibuprofène",))
    q = formulate(frame, dialect="local", **KW)
    assert q.startswith("(fievre[tiab] AND ibuprofene[tiab]")
    # the store folds the text the same way (3 bundled records write "Behçet"): the accented
    # and the plain spelling find the same citations
    accented = {h.pmid for h in store.search_hits("Behçet[tiab]", limit=100).hits}
    assert len(accented) == 3 and accented == {
        h.pmid for h in store.search_hits("behcet[tiab]", limit=100).hits
    }
    assert fold("“quoted” – dash ’s") == '"quoted" - dash \'s'
    assert [u.text for u in units("Ελληνικά fever", VOC)][0] == "Ελληνικά"  # other scripts stay


def test_a_slot_with_nothing_searchable_is_said_not_dropped(store: MedlineStore) -> None:
    frame = Frame(Task.THERAPY, problem="fever", intervention=("ibuprofen",), population=("the patients",))
    r = retrieve(frame, store, min_hits=1, **KW)
    assert r.notes == ("population 'the patients' has no searchable word: left out of the query",)
    with pytest.raises(InputError, match=r"nothing to search for \(problem '– …': only stop words"):
        formulate(Frame(Task.THERAPY, problem="– …"), **KW)


def test_co_problems_stand_in_for_a_missing_problem() -> None:
    f = Frame(Task.DIFFERENTIAL_DIAGNOSIS, co_problems=("cough",))
    assert formulate(f, **KW).startswith('(("Cough"[mh] OR cough[tiab]) AND (specificity[Title/Abstract])')
    with pytest.raises(InputError, match="nothing to search"):
        formulate(Frame(Task.THERAPY, problem="of the"), **KW)


def test_a_long_slot_is_searched_not_a_traceback(store: MedlineStore) -> None:
    """~985 words in a slot gave RecursionError in the store's parser (issue 12)."""
    words = " ".join(["fever"] * 985)
    frame = Frame(Task.THERAPY, problem=words, intervention=("ibuprofen",))
    r = retrieve(frame, store, min_hits=5, **KW)
    assert r.result.count >= 5 and not any(a.error for a in r.attempts)


# --- retrieval on real citations --------------------------------------------------------


def test_strict_query_finds_the_papers_answer(fever: Frame, store: MedlineStore) -> None:
    r = retrieve(fever, store, min_hits=1, **KW)
    assert r.relaxations == () and r.notes == ()
    assert r.result.pmids == ("1621668",)  # Kauffman et al. 1992, the paper's answer (section 4)
    assert len(r.attempts) == 1 and r.attempts[0].count == 1
    (answer,) = store.fetch(r.result.pmids)
    assert answer.title == "Antipyretic efficacy of ibuprofen vs acetaminophen."
    assert "randomized controlled trial[Publication Type]" in r.query  # PubMed's own filter


def test_relaxation_goes_step_by_step_and_says_so(fever: Frame, store: MedlineStore) -> None:
    r = retrieve(fever, store, min_hits=2, **KW)
    used = [a.relaxations[-1] for a in r.attempts[1:]]
    assert used == [
        "drop comparison",
        "drop population",
        "broad filter",
        "drop filter",
        "drop limits",
        "drop intervention",  # "MeSH terms only" changes nothing: "acute febrile illness" has none
    ]
    queries = [a.query for a in r.attempts]
    assert '"Ibuprofen"[mh]' in queries[0] and '"Ibuprofen"[mh]' not in queries[1]
    counts = [a.count for a in r.attempts]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] >= 2
    assert r.relaxations == r.attempts[-1].relaxations and r.query == queries[-1]
    for c in store.fetch(r.result.pmids):
        text = f"{c.title} {c.abstract_text}".casefold()
        assert "acute" in text and "febrile" in text and "illness" in text


def test_relaxed_results_still_match_the_frame(frames: list[Frame], store: MedlineStore) -> None:
    t14 = next(f for f in frames if f.id == "T14")  # tamsulosin for benign prostatic hyperplasia
    r = retrieve(t14, store, min_hits=2, **KW)
    assert r.result.count >= 2 and r.relaxations
    for c in store.fetch(r.result.pmids):
        text = f"{c.title} {c.abstract_text}".casefold()
        names = {h.descriptor_name for h in c.mesh_headings or ()}
        assert "prostatic hyperplasia" in text or "Prostatic Hyperplasia" in names


def test_too_few_hits_keeps_the_best_attempt(frames: list[Frame], store: MedlineStore) -> None:
    d03 = next(f for f in frames if f.id == "D03")
    r = retrieve(d03, store, min_hits=100_000, **KW)
    assert len(r.attempts) == len(ladder(d03, dialect="local", **KW))
    best = max(a.count for a in r.attempts)
    first_best = next(a for a in r.attempts if a.count == best)
    assert (r.query, r.relaxations, r.result.count) == (first_best.query, first_best.relaxations, best)


class _Refusing:
    """A source that refuses long queries, as a store with a parser limit would."""

    name = "local"

    def __init__(self, inner: MedlineStore, max_len: int) -> None:
        self.inner, self.max_len = inner, max_len

    def search(self, query: str, limit: int = 50, sort: str = "relevance") -> SearchResult:
        if len(query) > self.max_len:
            raise InputError(f"query too long ({len(query)} characters)")
        return self.inner.search(query, limit, sort)  # type: ignore[arg-type]

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        return self.inner.fetch(pmids)


def test_refused_queries_are_recorded_and_skipped(fever: Frame, store: MedlineStore) -> None:
    r = retrieve(fever, _Refusing(store, 200), min_hits=2, **KW)  # type: ignore[arg-type]
    refused = [a for a in r.attempts if a.error]
    assert refused and all("query too long" in (a.error or "") for a in refused)
    assert all(len(a.query) > 200 for a in refused)
    assert r.result.count >= 2 and len(r.query) <= 200
    with pytest.raises(InputError, match="query too long"):
        retrieve(fever, _Refusing(store, 10), min_hits=2, **KW)  # type: ignore[arg-type]


def test_pubmed_sources_get_pubmed_filters(fever: Frame) -> None:
    class Recorder:
        name = "pubmed"

        def __init__(self) -> None:
            self.queries: list[str] = []

        def search(self, query: str, limit: int = 50, sort: str = "relevance") -> SearchResult:
            self.queries.append(query)
            return SearchResult(query, 0, ())

        def fetch(self, pmids: Sequence[str]) -> list[Citation]:
            return []

    src = Recorder()
    r = retrieve(fever, src, min_hits=1, **KW)  # type: ignore[arg-type]
    assert len(src.queries) == len(ladder(fever, dialect="pubmed", **KW))
    assert "randomized controlled trial[Publication Type]" in src.queries[0]
    assert src.queries[0].endswith("AND hasabstract AND English[la] AND humans[mh]")
    assert r.query == src.queries[0] and r.relaxations == ()  # all empty: the least relaxed


def test_last_step_ors_every_term(fever: Frame, store: MedlineStore) -> None:
    r = retrieve(fever, store, min_hits=1000, limit=50, **KW)
    assert r.relaxations[-1] == "any term" and r.result.count >= 50
    assert r.query == (
        '(acute[tiab] OR febrile[tiab] OR illness[tiab] OR ("Acetaminophen"[mh] OR acetaminophen[tiab])'
        ' OR ("Ibuprofen"[mh] OR ibuprofen[tiab]))'
    )
    previous = r.attempts[-2]
    assert previous.relaxations[-1] == "drop intervention" and previous.count < r.result.count
