"""Query formulation and relaxation, run on real citations.

``MemorySource`` is a small in-memory ``CitationSource`` that really evaluates the minimal query
subset (``ebm.query.parse_query``) over the bundled corpus: words and phrases over title and
abstract, [mh] exploded down the MeSH trees, [pt], [la], hasabstract. The local store, when
present, runs the same frames in its own (PubMed) dialect.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.errors import InputError
from ebm.frame import Frame, Task, load_frame, load_frames
from ebm.medline.bundled import iter_bundled
from ebm.mesh import mesh
from ebm.query import (
    LADDER,
    And,
    HasAbstract,
    Not,
    Or,
    QuerySyntaxError,
    Term,
    Years,
    alternatives,
    build_query,
    formulate,
    ladder,
    parse_query,
    retrieve,
    units,
)
from ebm.rules import load_rules
from ebm.source import SearchResult

ROOT = Path(__file__).resolve().parents[1]
_WORDS = re.compile(r"[a-z0-9]+")
_LANG = {"english": "eng", "french": "fre", "german": "ger", "italian": "ita", "spanish": "spa"}


class _Doc:
    def __init__(self, c: Citation) -> None:
        self.c = c
        self.title = _WORDS.findall((c.title or "").casefold())
        self.text = self.title + ["\0"] + _WORDS.findall((c.abstract_text or "").casefold())
        self.words = set(self.text)
        voc = mesh()
        self.mh: set[str] = set()
        self.majr: set[str] = set()
        for h in c.mesh_headings or ():
            d = voc.get(h.descriptor_ui or "") or voc.by_name(h.descriptor_name)
            if d:
                self.mh.add(d.ui)
                if h.is_major:
                    self.majr.add(d.ui)
        self.pt = {p.name.casefold() for p in c.publication_types or ()}


class MemorySource:
    """Evaluates the minimal subset over citations held in memory."""

    def __init__(self, citations: Sequence[Citation], name: str = "local") -> None:
        self.name = name
        self.docs = [_Doc(c) for c in citations]
        self.by_pmid = {d.c.pmid: d.c for d in self.docs}
        self.queries: list[str] = []
        self._exploded: dict[str, set[str]] = {}

    def exploded(self, heading: str) -> set[str]:
        if heading not in self._exploded:
            desc = mesh().resolve(heading)
            assert desc is not None, heading  # formulation only writes real headings
            self._exploded[heading] = mesh().explode(desc.ui)
        return self._exploded[heading]

    def match(self, node: object, d: _Doc) -> bool:
        if isinstance(node, And):
            return all(self.match(x, d) for x in node.items)
        if isinstance(node, Or):
            return any(self.match(x, d) for x in node.items)
        if isinstance(node, Not):
            return self.match(node.include, d) and not self.match(node.exclude, d)
        if isinstance(node, HasAbstract):
            return d.c.has_abstract
        if isinstance(node, Years):
            return d.c.year is not None and node.start <= d.c.year <= node.end
        assert isinstance(node, Term)
        if node.tag in (None, "tiab", "ti"):
            words = _WORDS.findall(node.text.casefold())
            tokens = d.title if node.tag == "ti" else d.text
            if not (set(d.title) if node.tag == "ti" else d.words).issuperset(words):
                return False
            n = len(words)
            return n == 1 or any(tokens[i : i + n] == words for i in range(len(tokens) - n + 1))
        if node.tag in ("mh", "majr"):
            return not self.exploded(node.text).isdisjoint(d.mh if node.tag == "mh" else d.majr)
        if node.tag == "pt":
            return node.text.casefold() in d.pt
        if node.tag == "la":
            return d.c.language == _LANG.get(node.text.casefold(), node.text.casefold())
        raise AssertionError(node)

    def search(self, query: str, limit: int = 50, sort: str = "relevance") -> SearchResult:
        self.queries.append(query)
        node = parse_query(query)
        hits = [d.c.pmid for d in self.docs if self.match(node, d)]
        return SearchResult(query, len(hits), tuple(hits[:limit]))

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        return [self.by_pmid[p] for p in pmids if p in self.by_pmid]


@pytest.fixture(scope="module")
def corpus() -> list[Citation]:
    return list(iter_bundled())


@pytest.fixture(scope="module")
def memory(corpus: list[Citation]) -> MemorySource:
    return MemorySource(corpus)


@pytest.fixture(scope="module")
def frames(shared: Path) -> list[Frame]:
    return load_frames([ROOT / "questions", shared / "bench" / "frames"])


@pytest.fixture(scope="module")
def fever() -> Frame:
    return load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")


# --- formulation ------------------------------------------------------------------------


def test_fever_question_as_a_query(fever: Frame) -> None:
    q = formulate(fever, dialect="pubmed")
    narrow = load_rules().clinical_queries.get("therapy", "narrow").pubmed
    assert q == (
        "(acute[tiab] AND febrile[tiab] AND illness[tiab])"
        ' AND ("Acetaminophen"[mh] OR acetaminophen[tiab])'
        ' AND ("Ibuprofen"[mh] OR ibuprofen[tiab])'
        ' AND ("Child"[mh] OR children[tiab] OR child[tiab])'
        f" AND {narrow} AND hasabstract AND English[la] AND humans[mh]"
    )
    local = formulate(fever, dialect="local")
    assert local.endswith(f"AND {narrow} AND hasabstract) NOT (animals[mh] NOT humans[mh])")
    subset = formulate(fever, dialect="subset")
    assert load_rules().clinical_queries.get("therapy", "narrow").subset in subset
    parse_query(subset)


def test_every_frame_and_relaxation_stays_in_the_subset(frames: list[Frame]) -> None:
    assert len(frames) >= 29
    for frame in frames:
        steps = ladder(frame, dialect="subset")
        assert steps[0][1] == ()
        names = [name for name, _ in LADDER]
        for query, relaxations in steps:
            parse_query(query)
            assert list(relaxations) == sorted(relaxations, key=names.index)
        for (_, before), (_, after) in zip(steps, steps[1:], strict=False):
            assert after[:-1] == before  # one relaxation at a time, cumulatively
        # frame terms and limits are subset queries in every dialect; only filters differ
        for dialect in ("pubmed", "local"):
            cq = load_rules().clinical_queries.get(frame.task.value, "narrow")
            parse_query(build_query(frame, dialect=dialect).replace(cq.pubmed, "hasabstract"))


def test_slot_units_and_alternatives() -> None:
    voc = mesh()
    got = [
        (u.text, u.descriptor) for u in units("retinal detachment with proliferative vitreoretinopathy", voc)
    ]
    assert got == [
        ("retinal detachment", "Retinal Detachment"),
        ("proliferative vitreoretinopathy", "Vitreoretinopathy, Proliferative"),
    ]
    assert [(u.text, u.descriptor) for u in units("elderly patients", voc)] == [("elderly", "Aged")]
    assert [(u.text, u.descriptor) for u in units("gastroesophageal reflux disease", voc)] == [
        ("gastroesophageal reflux disease", "Gastroesophageal Reflux")
    ]
    assert [u.descriptor for u in units("suspected acute appendicitis", voc)] == [None, "Appendicitis"]
    assert alternatives("wheezing / asthma") == ["wheezing", "asthma"]
    assert alternatives("acetaminophen or ibuprofen, aspirin") == ["acetaminophen", "ibuprofen", "aspirin"]
    assert units("adults 18 years", voc)[0].descriptor == "Adult" and len(units("adults 18 years", voc)) == 1


def test_co_problems_stand_in_for_a_missing_problem() -> None:
    f = Frame(Task.DIFFERENTIAL_DIAGNOSIS, co_problems=("cough",))
    assert formulate(f, dialect="subset").startswith('(("Cough"[mh] OR cough[tiab]) AND (specificity[tiab])')
    with pytest.raises(InputError, match="nothing to search"):
        formulate(Frame(Task.THERAPY, problem="of the"))


# --- the subset parser ------------------------------------------------------------------


def test_parse_follows_pubmed_left_to_right() -> None:
    node = parse_query('a[tiab] OR "b c"[tiab] AND d[mh] NOT e[pt]')
    assert node == Not(
        And((Or((Term("a", "tiab"), Term("b c", "tiab", True))), Term("d", "mh"))), Term("e", "pt")
    )
    assert parse_query("hasabstract AND 2000:2010[dp] x") == And(
        (HasAbstract(), Years(2000, 2010), Term("x", None))
    )
    # an unquoted run of words before a tag is one term, as PubMed reads it
    assert parse_query("randomized controlled trial[pt] OR x") == Or(
        (Term("randomized controlled trial", "pt", True), Term("x", None))
    )


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("random*[tiab]", "truncation (random*)"),
        ("therapeutic use[sh]", "field tag [sh] at character 1 is not in the query subset"),
        ("randomized[Title/Abstract]", "write [tiab]"),
        ("(a[tiab] OR b[tiab]", "unclosed '('"),
        ("a[tiab])", "unmatched ')'"),
        ('"a b[tiab]', "unclosed quote"),
        ("a[tiab] AND", "query ends where a term was expected"),
        ("OR a[tiab]", "unexpected 'OR'"),
        ("abc[dp]", "[dp] at character 1 takes a year"),
        ("", "empty query"),
    ],
)
def test_parse_rejects_what_is_outside_the_subset(query: str, expected: str) -> None:
    with pytest.raises(QuerySyntaxError) as e:
        parse_query(query)
    assert expected in str(e.value)


# --- retrieval on real citations --------------------------------------------------------


def test_strict_query_finds_the_papers_answer(fever: Frame, memory: MemorySource) -> None:
    r = retrieve(fever, memory, min_hits=1, dialect="subset")
    assert r.relaxations == ()
    assert r.result.pmids == ("1621668",)  # Kauffman et al. 1992, the paper's answer (section 4)
    assert len(r.attempts) == 1 and r.attempts[0].count == 1
    (answer,) = memory.fetch(r.result.pmids)
    assert answer.title == "Antipyretic efficacy of ibuprofen vs acetaminophen."


def test_relaxation_goes_step_by_step_and_says_so(fever: Frame, memory: MemorySource) -> None:
    r = retrieve(fever, memory, min_hits=2, dialect="subset")
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
    assert '"Child"[mh]' in queries[1] and '"Child"[mh]' not in queries[2]
    cq = load_rules().clinical_queries
    assert cq.get("therapy", "narrow").subset in queries[2]
    assert cq.get("therapy", "broad").subset in queries[3]
    assert "random" not in queries[4] and "hasabstract" in queries[4]
    assert "hasabstract" not in queries[5]
    assert queries[6] == "(acute[tiab] AND febrile[tiab] AND illness[tiab])"
    counts = [a.count for a in r.attempts]
    assert counts == sorted(counts) and counts[0] == 1 and counts[-1] >= 2
    assert r.relaxations == r.attempts[-1].relaxations and r.query == queries[-1]
    for c in memory.fetch(r.result.pmids):
        text = f"{c.title} {c.abstract_text}".casefold()
        assert "acute" in text and "febrile" in text and "illness" in text


def test_relaxed_results_still_match_the_frame(frames: list[Frame], memory: MemorySource) -> None:
    t14 = next(f for f in frames if f.id == "T14")  # tamsulosin for benign prostatic hyperplasia
    for min_hits, intervention_kept in ((2, True), (5, False)):
        r = retrieve(t14, memory, min_hits=min_hits, dialect="subset")
        assert r.result.count >= min_hits and r.relaxations
        assert ("drop intervention" not in r.relaxations) is intervention_kept
        for c in memory.fetch(r.result.pmids):
            text = f"{c.title} {c.abstract_text}".casefold()
            names = {h.descriptor_name for h in c.mesh_headings or ()}
            assert "prostatic hyperplasia" in text or "Prostatic Hyperplasia" in names
            if intervention_kept:
                assert "tamsulosin" in text or "Tamsulosin" in names


def test_too_few_hits_keeps_the_best_attempt(frames: list[Frame], memory: MemorySource) -> None:
    d03 = next(f for f in frames if f.id == "D03")
    r = retrieve(d03, memory, min_hits=10_000, dialect="subset")
    assert len(r.attempts) == len(ladder(d03, dialect="subset"))
    best = max(a.count for a in r.attempts)
    first_best = next(a for a in r.attempts if a.count == best)
    assert (r.query, r.relaxations, r.result.count) == (first_best.query, first_best.relaxations, best)


class _Refusing:
    """A source that refuses long queries, as a store with a parser limit would."""

    name = "local"

    def __init__(self, inner: MemorySource, max_len: int) -> None:
        self.inner, self.max_len = inner, max_len

    def search(self, query: str, limit: int = 50, sort: str = "relevance") -> SearchResult:
        if len(query) > self.max_len:
            raise InputError(f"query too long ({len(query)} characters)")
        return self.inner.search(query, limit, sort)

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        return self.inner.fetch(pmids)


def test_refused_queries_are_recorded_and_skipped(fever: Frame, memory: MemorySource) -> None:
    r = retrieve(fever, _Refusing(memory, 200), min_hits=2, dialect="subset")
    refused = [a for a in r.attempts if a.error]
    assert refused and all("query too long" in a.error for a in refused)
    assert all(len(a.query) > 200 for a in refused)
    assert r.result.count >= 2 and len(r.query) <= 200
    with pytest.raises(InputError, match="query too long"):
        retrieve(fever, _Refusing(memory, 10), min_hits=2, dialect="subset")


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
    r = retrieve(fever, src, min_hits=1)
    assert len(src.queries) == len(ladder(fever, dialect="pubmed"))
    assert "randomized controlled trial[Publication Type]" in src.queries[0]
    assert src.queries[0].endswith("AND hasabstract AND English[la] AND humans[mh]")
    assert r.query == src.queries[0] and r.relaxations == ()  # all empty: the least relaxed


def test_same_frames_on_the_local_store(fever: Frame, corpus: list[Citation], tmp_path: Path) -> None:
    store_module = pytest.importorskip("ebm.store")
    store = store_module.MedlineStore(tmp_path / "store.sqlite")
    store.ingest(corpus)
    r = retrieve(fever, store, min_hits=1)
    assert r.relaxations == () and r.result.pmids == ("1621668",)
    assert "randomized controlled trial[Publication Type]" in r.query  # PubMed's own filter


def test_last_step_ors_every_term(fever: Frame, memory: MemorySource) -> None:
    r = retrieve(fever, memory, min_hits=50, limit=50, dialect="subset")
    assert r.relaxations[-1] == "any term" and r.result.count >= 50
    assert r.query == (
        '(acute[tiab] OR febrile[tiab] OR illness[tiab] OR ("Acetaminophen"[mh] OR acetaminophen[tiab])'
        ' OR ("Ibuprofen"[mh] OR ibuprofen[tiab]))'
    )
    previous = r.attempts[-2]
    assert previous.relaxations[-1] == "drop intervention" and previous.count < r.result.count
