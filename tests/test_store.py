"""The local MEDLINE store on real records: search answers checked against the citations' own
fields, idempotent and interrupted ingest, the benchmark pools reproduced."""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nltk.stem.porter import PorterStemmer

from ebm.citation import Citation, PublicationType
from ebm.errors import DataError, InputError
from ebm.medline.bundled import iter_bundled
from ebm.medline.reader import Deletion, read_citations
from ebm.mesh import mesh
from ebm.mesh import mesh as shipped_mesh
from ebm.store import MedlineStore
from ebm.store.default import build_default_store
from ebm.store.sqlite import IngestReport, sort_date

# ------------------------------------------------------------------ fixtures


@functools.cache
def load_bundled() -> list[Citation]:
    """The bundled citations, read once per process (tests in other modules share them and the
    token caches below)."""
    return list(iter_bundled())


@pytest.fixture(scope="session")
def bundled() -> list[Citation]:
    return load_bundled()


@functools.cache
def _bundled_store_file(basetemp: Path) -> Path:
    path = basetemp / "bundled-store" / "medline.sqlite"
    path.parent.mkdir()
    build_default_store(path, quiet=True, vocabulary=shipped_mesh)
    return path


def bundled_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MedlineStore]:
    """The bundled corpus in a store, built as the default store is, once per test session for
    every module that reads it (test_store, test_query, test_store_search_plan: none writes)."""
    with MedlineStore(_bundled_store_file(tmp_path_factory.getbasetemp()), vocabulary=shipped_mesh) as s:
        yield s


@pytest.fixture(scope="session")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MedlineStore]:
    yield from bundled_store(tmp_path_factory)


def medline_file(shared: Path) -> Path:
    return shared / "medline" / "medline16n0902.xml.gz"


# ------------------------------------------------------------------ independent expectations
# Computed from the citations' own fields in Python: tokens cut as FTS5's unicode61 tokenizer
# cuts them, stemmed by NLTK's implementation of the original Porter algorithm (the one FTS5's
# porter tokenizer implements), never through the store or its query translation.

_PORTER = PorterStemmer(mode=PorterStemmer.ORIGINAL_ALGORITHM)


@functools.cache
def stem(word: str) -> str:
    return _PORTER.stem(word, to_lowercase=False)


def words(text: str | None) -> list[str]:
    """Runs of letters and digits, case- and diacritic-folded (unicode61's defaults)."""
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", text or "") if not unicodedata.combining(ch))
    return re.findall(r"[^\W_]+", plain.casefold())


_TOKENS: dict[int, tuple[Citation, list[str], list[str], list[list[str]]]] = {}
_STEMS: dict[int, tuple[list[str], list[str], list[list[str]]]] = {}


def tokens(c: Citation) -> tuple[list[str], list[str], list[list[str]]]:
    """Title, abstract and heading-name words of a citation, computed once per object."""
    if id(c) not in _TOKENS:  # the cache holds the citation, so its id is not reused
        _TOKENS[id(c)] = (
            c,
            words(c.title),
            # section labels are indexed with their text ("RESULTS: ..."), as docs/store.md says
            [w for s in c.abstract or () for w in words(f"{s.label or ''} {s.text}")],
            [words(h.descriptor_name) for h in c.mesh_headings or ()],
        )
    return _TOKENS[id(c)][1:]


def title_words(c: Citation) -> list[str]:
    return tokens(c)[0]


def abstract_words(c: Citation) -> list[str]:
    return tokens(c)[1]


def heading_names(c: Citation) -> list[list[str]]:
    return tokens(c)[2]


def stemmed(c: Citation) -> tuple[list[str], list[str], list[list[str]]]:
    """``tokens`` stemmed, computed once per object."""
    if id(c) not in _STEMS:
        ti, ab, names = tokens(c)
        _STEMS[id(c)] = ([stem(w) for w in ti], [stem(w) for w in ab], [[stem(w) for w in n] for n in names])
    return _STEMS[id(c)]


def has(got: list[str], phrase: str) -> bool:
    """Does the stem list contain the phrase, word by word, after stemming?"""
    want = [stem(w) for w in words(phrase)]
    return any(got[i : i + len(want)] == want for i in range(len(got) - len(want) + 1))


def in_ti(c: Citation, phrase: str) -> bool:
    return has(stemmed(c)[0], phrase)


def in_tiab(c: Citation, phrase: str) -> bool:
    return has(stemmed(c)[0], phrase) or has(stemmed(c)[1], phrase)


def in_tw(c: Citation, phrase: str) -> bool:
    return in_tiab(c, phrase) or any(has(name, phrase) for name in stemmed(c)[2])


def matching(citations: list[Citation], pred: Callable[[Citation], bool]) -> set[str]:
    return {c.pmid for c in citations if pred(c)}


def ui_of(ui: str | None, name: str) -> str | None:
    """The record's UI, else that of the MeSH descriptor of this name (2006 records give none)."""
    d = mesh().by_name(name)
    return ui or (d.ui if d else None)


def heading_uis(c: Citation) -> set[str]:
    return {ui_of(h.descriptor_ui, h.descriptor_name) for h in c.mesh_headings or ()} - {None}


def pubtype_uis(c: Citation) -> set[str]:
    return {ui_of(p.ui, p.name) for p in c.publication_types or ()} - {None}


def under_tree(ui: str) -> set[str]:
    """Descriptors at or below any tree position of ``ui``, read from the tree numbers."""
    roots = mesh().get(ui).tree_numbers
    return {
        d.ui
        for d in mesh().descriptors.values()
        if any(t == r or t.startswith(r + ".") for t in d.tree_numbers for r in roots)
    }


def all_hits(store: MedlineStore, query: str, sort: str = "relevance") -> set[str]:
    hits = store.search_hits(query, limit=100_000, sort=sort)
    pmids = [h.pmid for h in hits.hits]
    assert len(pmids) == len(set(pmids)) == hits.count
    return set(pmids)


# ------------------------------------------------------------------ searches


def test_febrile_and_ibuprofen_tiab_returns_the_right_pmids(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    expected = matching(bundled, lambda c: in_tw(c, "febrile") and in_tiab(c, "ibuprofen"))
    assert expected  # the corpus has such citations
    assert all_hits(store, '"febrile" AND ibuprofen[tiab]') == expected
    # each half alone, so the check does not hinge on a handful of PMIDs
    assert all_hits(store, '"febrile"') == matching(bundled, lambda c: in_tw(c, "febrile"))
    assert all_hits(store, "ibuprofen[tiab]") == matching(bundled, lambda c: in_tiab(c, "ibuprofen"))


@pytest.mark.parametrize(
    "name", ["Headache Disorders", "Cardiovascular Diseases", "Anti-Inflammatory Agents"]
)
def test_mesh_search_explodes_the_tree(store: MedlineStore, bundled: list[Citation], name: str) -> None:
    ui = mesh().by_name(name).ui
    tree = under_tree(ui)
    expected = matching(bundled, lambda c: bool(heading_uis(c) & tree))
    exact = matching(bundled, lambda c: ui in heading_uis(c))
    assert len(expected) > len(exact)  # explosion matters for these headings
    assert all_hits(store, f'"{name}"[mh]') == expected
    assert all_hits(store, f"{name.lower()}[MeSH Terms]") == expected
    assert all_hits(store, f'"{name}"[mh:noexp]') == exact


def test_major_topic_and_qualifier_searches(store: MedlineStore, bundled: list[Citation]) -> None:
    tree = under_tree(mesh().by_name("Asthma").ui)

    def major(c: Citation) -> bool:
        return any(
            heading_uis(dataclasses.replace(c, mesh_headings=(h,))) & tree and h.is_major
            for h in c.mesh_headings or ()
        )

    def asthma_drug_therapy(c: Citation) -> bool:
        return any(
            heading_uis(dataclasses.replace(c, mesh_headings=(h,))) & tree
            and any(q.name == "drug therapy" for q in h.qualifiers)
            for h in c.mesh_headings or ()
        )

    expected = matching(bundled, major)
    assert expected and all_hits(store, "asthma[majr]") == expected
    expected = matching(bundled, asthma_drug_therapy)
    assert expected and all_hits(store, "asthma/drug therapy[mh]") == expected
    expected = matching(
        bundled, lambda c: any(q.name == "drug therapy" for h in c.mesh_headings or () for q in h.qualifiers)
    )
    assert all_hits(store, "drug therapy[sh]") == expected


def test_heading_names_older_than_mesh_2024_match_as_recorded(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    old = sorted(
        {
            h.descriptor_name
            for c in bundled
            for h in c.mesh_headings or ()
            if mesh().resolve(h.descriptor_name) is None
        }
    )
    assert old  # e.g. PubMedQA's "Discrimination (Psychology)", renamed since
    for name in old[:5]:
        expected = matching(
            bundled, lambda c, n=name: any(h.descriptor_name == n for h in c.mesh_headings or ())
        )
        hits = store.search_hits(f'"{name}"[mh]', limit=1000)
        assert {h.pmid for h in hits.hits} == expected and "as recorded" in hits.translation


def test_humans_publication_type_language_date_and_abstract_filters(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    humans = matching(bundled, lambda c: "D006801" in heading_uis(c))
    assert humans and all_hits(store, "humans[mh]") == humans
    trial_tree = under_tree(mesh().by_name("Clinical Trial").ui)
    trials = matching(bundled, lambda c: bool(pubtype_uis(c) & trial_tree))
    rcts = matching(
        bundled, lambda c: any(p.name == "Randomized Controlled Trial" for p in c.publication_types or ())
    )
    assert rcts < trials  # Clinical Trial[pt] takes RCTs in by explosion
    assert all_hits(store, "clinical trial[pt]") == trials
    assert all_hits(store, "randomized controlled trial[pt:noexp]") == rcts
    english = matching(bundled, lambda c: c.language == "eng")
    assert english and all_hits(store, "english[la]") == english == all_hits(store, "eng[la]")
    in_range = matching(bundled, lambda c: c.year is not None and 2000 <= c.year <= 2010)
    assert in_range and all_hits(store, "2000:2010[dp]") == in_range
    assert all_hits(store, "2016[dp]") == matching(bundled, lambda c: c.year == 2016)
    assert all_hits(store, "hasabstract") == matching(bundled, lambda c: c.has_abstract)


def test_boolean_operators_left_to_right_and_title_field(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    def tw(word: str) -> set[str]:
        return matching(bundled, lambda c: in_tw(c, word))

    asthma, wheezing, children = tw("asthma"), tw("wheezing"), tw("children")
    assert all_hits(store, "asthma OR wheezing AND children") == (asthma | wheezing) & children
    assert all_hits(store, "asthma OR (wheezing AND children)") == asthma | (wheezing & children)
    assert (asthma | wheezing) & children != asthma | (wheezing & children)
    assert all_hits(store, "asthma NOT children") == asthma - children
    assert all_hits(store, "asthma children") == asthma & children  # implicit AND
    titled = matching(bundled, lambda c: in_ti(c, "asthma"))
    assert titled < asthma and all_hits(store, "asthma[ti]") == titled


def test_large_queries_run_and_match_the_citations(store: MedlineStore, bundled: list[Citation]) -> None:
    """600 ORed words, 600 ORed headings, 985 ANDed words, 150 levels of nesting (issue 12:
    RecursionError and SQLite's 500-term compound limit before)."""
    words = sorted({w for c in bundled[:400] for w in title_words(c) if w.isalpha() and len(w) > 3})[:600]
    assert len(words) == 600
    stems = {stem(w) for w in words}  # one-word terms: a set test is the phrase test

    def tiab(c: Citation) -> bool:
        return not stems.isdisjoint(stemmed(c)[0]) or not stems.isdisjoint(stemmed(c)[1])

    assert all_hits(store, " OR ".join(f"{w}[tiab]" for w in words)) == matching(bundled, tiab)
    tw = matching(bundled, lambda c: tiab(c) or any(not stems.isdisjoint(n) for n in stemmed(c)[2]))
    assert all_hits(store, " OR ".join(words)) == tw
    names = sorted({h.descriptor_name for c in bundled[:500] for h in c.mesh_headings or ()})
    names = [n for n in names if mesh().by_name(n)][:600]
    assert len(names) == 600
    uis = set().union(*(mesh().explode(mesh().by_name(n).ui) for n in names))
    by_heading = matching(
        bundled,
        lambda c: any(ui_of(h.descriptor_ui, h.descriptor_name) in uis for h in c.mesh_headings or ()),
    )
    assert all_hits(store, " OR ".join(f'"{n}"[mh]' for n in names)) == by_heading
    assert all_hits(store, " AND ".join(["fever[tiab]"] * 985)) == matching(
        bundled, lambda c: in_tiab(c, "fever")
    )
    # 150 levels of alternating operators: w0 AND (w1 OR (w2 AND ...)), checked level by level
    tw_set = matching(bundled, lambda c: in_tw(c, "asthma"))
    query, expected = "asthma", tw_set
    cycle = ["children", "wheezing", "fever", "cough"]
    sets = {w: matching(bundled, lambda c, w=w: in_tw(c, w)) for w in cycle}
    for i in range(150):
        w, op = cycle[i % 4], ("AND", "OR")[i % 2]
        query = f"{w} {op} ({query})"
        expected = sets[w] & expected if op == "AND" else sets[w] | expected
    assert tw_set and all_hits(store, query) == expected
    assert all_hits(store, "(" * 2000 + "asthma" + ")" * 2000) == tw_set  # brackets around one term


def test_query_limits_are_one_line_errors(store: MedlineStore) -> None:
    deep = "asthma"
    for i in range(1000):
        deep = f"w{i} {('AND', 'OR')[i % 2]} ({deep})"
    with pytest.raises(InputError, match=r"^query nests 1000 levels .* at most 200$"):
        store.search_hits(deep)
    with pytest.raises(InputError, match=r"^query has 10,001 terms; the local store takes at most 10,000$"):
        store.search_hits(" OR ".join(["asthma"] * 10_001))


def test_not_excludes_every_later_item(store: MedlineStore, bundled: list[Citation]) -> None:
    sets = {w: matching(bundled, lambda c, w=w: in_tw(c, w)) for w in ("asthma", "children", "wheezing")}
    want = sets["asthma"] - sets["children"] - sets["wheezing"]
    assert want and all_hits(store, "asthma NOT children NOT wheezing") == want
    assert all_hits(store, "asthma NOT (children NOT wheezing)") == sets["asthma"] - (
        sets["children"] - sets["wheezing"]
    )


def test_truncation_takes_every_word_starting_with_the_prefix(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    def starts(ws: list[str]) -> bool:
        return any(w.startswith("random") for w in ws)

    tiab = matching(bundled, lambda c: starts(title_words(c)) or starts(abstract_words(c)))
    tw = tiab | matching(bundled, lambda c: any(starts(n) for n in heading_names(c)))
    forms = {w for c in bundled for w in title_words(c) + abstract_words(c) if w.startswith("random")}
    assert len({stem(w) for w in forms}) > 1  # "randomly" stems apart: a stemmed search would miss it
    assert all_hits(store, "random*[tiab]") == tiab
    assert all_hits(store, "random*") == tw
    titled = matching(bundled, lambda c: any(w.startswith("wheez") for w in title_words(c)))
    assert titled and all_hits(store, "wheez*[ti]") == titled


def test_phrases_match_adjacent_words_only(store: MedlineStore, bundled: list[Citation]) -> None:
    expected = matching(bundled, lambda c: in_tiab(c, "body mass index"))
    assert expected and all_hits(store, '"body mass index"[tiab]') == expected
    loose = all_hits(store, "body[tiab] AND mass[tiab] AND index[tiab]")
    assert expected < loose


def test_relevance_is_bm25_descending_and_date_sort_is_newest_first(store: MedlineStore) -> None:
    hits = store.search_hits("asthma OR wheeze", limit=1000)
    scores = [h.score for h in hits.hits]
    scored = [s for s in scores if s is not None]
    assert scored == sorted(scored, reverse=True) and scored == scores[: len(scored)]
    # citations that match through their MeSH headings only have no text score and come last
    assert 0 < len(scored) < len(scores) == hits.count
    dated = store.search_hits("humans[mh] AND 1990:2023[dp]", limit=500, sort="date")
    keys = [sort_date(c.year, c.pub_date) for c in store.fetch([h.pmid for h in dated.hits])]
    assert len(keys) == min(500, dated.count) and keys == sorted(keys, reverse=True)
    assert all(h.score is None for h in dated.hits)
    assert store.search("asthma OR wheeze", limit=5).pmids == tuple(h.pmid for h in hits.hits[:5])


def test_fetch_keeps_the_order_asked_and_leaves_out_unknown_pmids(
    store: MedlineStore, bundled: list[Citation]
) -> None:
    wanted = [bundled[500].pmid, "999999999", bundled[3].pmid, bundled[7000].pmid]
    got = store.fetch(wanted)
    assert [c.pmid for c in got] == [wanted[0], wanted[2], wanted[3]]
    assert got == [bundled[500], bundled[3], bundled[7000]]  # the record comes back whole


def test_every_bundled_record_comes_back_whole(store: MedlineStore, bundled: list[Citation]) -> None:
    assert list(store.iter_citations()) == bundled
    assert [c.extra for c in store.iter_citations()] == [c.extra for c in bundled]  # extra: compare=False


def test_stats_count_the_bundled_corpus(store: MedlineStore, bundled: list[Citation]) -> None:
    st = store.stats()
    assert st.citations == len(bundled) >= 8000
    assert st.with_abstract == sum(c.has_abstract for c in bundled)
    assert st.with_mesh == sum(bool(c.mesh_headings) for c in bundled) >= 1100
    assert st.with_publication_types == sum(bool(c.publication_types) for c in bundled) >= 650
    years = [c.year for c in bundled if c.year is not None]
    assert (st.year_min, st.year_max) == (min(years), max(years))
    assert sum(st.sources.values()) == st.citations
    assert st.sources["medline16n0902.xml.gz"] == sum(c.source == "medline16n0902.xml.gz" for c in bundled)


def test_benchmark_pools_are_reproduced(store: MedlineStore, shared: Path) -> None:
    """pools.run is BM25 (porter, title 5, abstract 1) over the bundle: same sets, same scores."""
    pools: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for line in (shared / "bench" / "pools.run").read_text().splitlines():
        qid, _, pmid, _, score, _ = line.split()
        pools[qid].append((pmid, float(score)))
    frames = sorted((shared / "bench" / "frames").glob("*.json"))
    assert len(frames) == len(pools) > 20
    for path in frames:
        frame = json.loads(path.read_text())
        ref = pools[frame["id"]]
        hits = store.search_hits(frame["pool_query"], limit=len(ref)).hits
        assert {h.pmid for h in hits} == {p for p, _ in ref}, frame["id"]
        mine = {h.pmid: h.score for h in hits}
        for pmid, score in ref:
            assert mine[pmid] == pytest.approx(score, abs=6e-5), (frame["id"], pmid)
        # the order differs at most between citations of equal score
        for h, (_, score) in zip(hits, ref, strict=True):
            assert h.score == pytest.approx(score, abs=6e-5)


# ------------------------------------------------------------------ ingest


def test_ingest_real_files_is_idempotent(tmp_path: Path, shared: Path) -> None:
    records = list(read_citations(medline_file(shared)))
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        first = s.ingest(read_citations(medline_file(shared)), batch_size=100)
        assert (first.added, first.replaced, first.batches) == (len(records), 0, 7)
        stats, hits = s.stats(), s.search_hits("low back pain[mh] OR therapy", limit=50)
        again = s.ingest(read_citations(medline_file(shared)), batch_size=100)
        assert (again.added, again.replaced) == (0, len(records))
        assert s.stats() == stats and len(s) == len(records)
        assert s.search_hits("low back pain[mh] OR therapy", limit=50) == hits
        assert s.fetch([r.pmid for r in records]) == records
        s.check()


def test_reingest_replaces_the_record_and_its_index_entries(tmp_path: Path, shared: Path) -> None:
    records = list(read_citations(medline_file(shared)))
    target = records[10]
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        s.ingest(records)
        old_word = words(target.title)[0]
        assert target.pmid in all_hits(s, f"{old_word}[ti]")
        changed = dataclasses.replace(target, title="Zyxomycin for quuxalgia", mesh_headings=None)
        report = s.ingest([changed])
        assert (report.added, report.replaced) == (0, 1)
        assert s.get(target.pmid) == changed
        assert all_hits(s, "zyxomycin[ti]") == {target.pmid}
        assert target.pmid not in all_hits(s, f'"{target.title}"[ti]')
        assert target.pmid not in all_hits(s, f'"{target.mesh_headings[0].descriptor_name}"[mh:noexp]')
        s.check()


def test_deletions_remove_records_and_index_entries(tmp_path: Path, shared: Path) -> None:
    records = list(read_citations(medline_file(shared)))
    gone = records[:3]
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        report = s.ingest([*records, Deletion(tuple(c.pmid for c in gone))])
        assert report.deleted == 3 and len(s) == len(records) - 3
        assert s.fetch([c.pmid for c in gone]) == []
        assert not all_hits(s, " OR ".join(f"{c.pmid}[pmid]" for c in gone))
        s.check()


def test_a_failing_batch_rolls_back_and_keeps_what_was_stored(tmp_path: Path, shared: Path) -> None:
    """A batch that fails inside its transaction (here a record SQLite refuses) changes nothing:
    records it would have replaced keep their stored version."""
    records = list(read_citations(medline_file(shared)))
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        s.ingest(records[:300], batch_size=100)
        replacement = [dataclasses.replace(c, title="Zyxomycin") for c in records[200:250]]
        # a publication type without a name: SQLite refuses it (NOT NULL) mid-transaction
        broken = dataclasses.replace(records[260], publication_types=(PublicationType("D016428", None),))
        report = IngestReport()
        with pytest.raises(DataError, match="rolled back"):
            s.ingest([*replacement, broken], batch_size=100, report=report)
        assert report.stored == 0 and len(s) == 300
        assert s.fetch([c.pmid for c in records[:300]]) == records[:300]
        assert not all_hits(s, "zyxomycin[ti]")
        s.check()


def test_an_interrupt_keeps_committed_batches_only(tmp_path: Path, shared: Path) -> None:
    records = list(read_citations(medline_file(shared)))

    def interrupted() -> Iterator[Citation]:
        yield from records[:250]
        raise KeyboardInterrupt

    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        report = IngestReport()
        with pytest.raises(KeyboardInterrupt):
            s.ingest(interrupted(), batch_size=100, report=report)
        assert report.stored == 200 and len(s) == 200
        assert s.fetch([c.pmid for c in records[:250]]) == records[:200]
        s.check()


def test_a_malformed_file_keeps_the_records_before_it(tmp_path: Path, shared: Path) -> None:
    xml = gzip.decompress(medline_file(shared).read_bytes())
    cut = xml.index(b"<MedlineCitation ", len(xml) // 2) + 300  # inside a record half-way
    bad = tmp_path / "truncated.xml"
    bad.write_bytes(xml[:cut])
    before: list[Citation] = []
    with pytest.raises(InputError):
        before.extend(read_citations(bad))
    assert 100 < len(before) < 604
    sample = list(read_citations(shared / "medline" / "medsamp2006.xml"))
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as s:
        s.ingest(sample)
        report = IngestReport()
        with pytest.raises(InputError, match="truncated.xml"):
            s.ingest(read_citations(bad), batch_size=50, report=report)
        assert report.stored == len(before) and len(s) == len(sample) + len(before)
        assert s.fetch([c.pmid for c in sample + before]) == sample + before
        s.check()


def ingest_command(db: Path, *args: str) -> list[str]:
    """``ebm corpus ingest`` into ``db`` with one transaction per record (slow enough to be killed
    mid-way), then ``args``."""
    return [sys.executable, "-m", "ebm", "corpus", "ingest", "--db", str(db), "--batch-size", "1", *args]


def test_killed_ingest_leaves_a_consistent_store(tmp_path: Path, shared: Path) -> None:
    """SIGKILL an `ebm corpus ingest` (one transaction per record) mid-way, then reopen."""
    db = tmp_path / "killed.sqlite"
    records = list(read_citations(medline_file(shared)))
    sample = list(read_citations(shared / "medline" / "medsamp2006.xml"))
    with MedlineStore(db, vocabulary=shipped_mesh) as s:
        s.ingest(sample)
    proc = subprocess.Popen(
        ingest_command(db, str(medline_file(shared))), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 120
        while True:
            with sqlite3.connect(db, timeout=30) as peek:
                n = peek.execute("SELECT count(*) FROM citations").fetchone()[0]
            if n >= len(sample) + 40 or proc.poll() is not None or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "ingest finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    with MedlineStore(db, vocabulary=shipped_mesh) as s:
        s.check()
        stored = len(s) - len(sample)
        assert 40 <= stored < len(records)
        assert s.fetch([c.pmid for c in sample]) == sample
        # the committed ones are a prefix of the file, whole and searchable
        assert s.fetch([c.pmid for c in records[:stored]]) == records[:stored]
        assert not s.fetch([c.pmid for c in records[stored:]])
        assert all_hits(s, " OR ".join(f"{c.pmid}[pmid]" for c in records[:stored])) == {
            c.pmid for c in records[:stored]
        }
        # running it again completes the store
        s.ingest(read_citations(medline_file(shared)))
        assert len(s) == len(sample) + len(records)
        s.check()


def test_opening_something_that_is_not_a_store_is_a_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(DataError, match="junk.sqlite"):
        MedlineStore(junk, vocabulary=shipped_mesh)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t(x)")
    with pytest.raises(DataError, match="not an ebm MEDLINE store"):
        MedlineStore(other, vocabulary=shipped_mesh)


def test_sort_date_reads_medline_dates() -> None:
    assert sort_date(2016, "2016 Mar 12") == "2016-03-12"
    assert sort_date(1998, "1998 Dec-1999 Jan") == "1998-12-00"
    assert sort_date(2000, "2000 Spring") == "2000-03-00"
    assert sort_date(2007, "2007") == "2007-00-00"
    assert sort_date(None, None) is None
