"""``ebm corpus ingest|search|stats`` end to end on real records."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from ebm.citation import Citation
from ebm.cli import main
from ebm.medline.reader import read_citations
from ebm.mesh import mesh
from ebm.mesh import mesh as shipped_mesh
from tests.test_store import heading_uis, in_tiab, in_tw, load_bundled, matching, under_tree


@pytest.fixture(scope="module")
def bundled() -> list[Citation]:
    return load_bundled()


@pytest.fixture(scope="module")
def first_use(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str, dict]]:
    """`ebm corpus stats --json` with an empty EBM_HOME: the default store gets created.
    (Module-scoped, so it captures output itself: capsys is per test.)"""
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EBM_HOME", str(home))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["corpus", "stats", "--json"])
    assert code == 0
    yield home / "medline.sqlite", err.getvalue(), json.loads(out.getvalue())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_first_use_creates_the_default_store_from_the_bundled_corpus(
    first_use: tuple[Path, str, dict], bundled: list[Citation]
) -> None:
    path, err, stats = first_use
    assert path.is_file()
    assert "creating it from the bundled corpus" in err and str(path) in err
    assert stats["path"] == str(path)
    assert stats["citations"] == len(bundled) >= 8000
    assert stats["with_mesh"] == sum(bool(c.mesh_headings) for c in bundled) >= 1100
    assert stats["with_publication_types"] == sum(bool(c.publication_types) for c in bundled) >= 650
    assert stats["with_abstract"] == sum(c.has_abstract for c in bundled)
    years = [c.year for c in bundled if c.year]
    assert (stats["year_min"], stats["year_max"]) == (min(years), max(years))
    assert sum(stats["sources"].values()) == len(bundled)


def test_the_default_store_is_created_once(
    first_use: tuple[Path, str, dict], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _, stats = first_use
    monkeypatch.setenv("EBM_HOME", str(path.parent))
    code, out, err = run(capsys, "corpus", "stats", "--json")
    assert code == 0 and "creating" not in err and json.loads(out) == stats


def test_search_json_febrile_and_ibuprofen(
    first_use: tuple[Path, str, dict], bundled: list[Citation], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(first_use[0])
    query = '"febrile" AND ibuprofen[tiab]'
    code, out, _ = run(capsys, "corpus", "search", query, "--json", "--db", db, "--limit", "1000")
    doc = json.loads(out)
    expected = matching(bundled, lambda c: in_tw(c, "febrile") and in_tiab(c, "ibuprofen"))
    assert code == 0 and doc["query"] == query and doc["count"] == len(expected) > 0
    assert {r["pmid"] for r in doc["results"]} == expected
    assert [r["rank"] for r in doc["results"]] == list(range(1, len(expected) + 1))
    by_pmid = {c.pmid: c for c in bundled}
    for r in doc["results"]:
        assert r["title"] == by_pmid[r["pmid"]].title and r["year"] == by_pmid[r["pmid"]].year
        assert r["score"] > 0


def test_search_json_mesh_with_explosion(
    first_use: tuple[Path, str, dict], bundled: list[Citation], capsys: pytest.CaptureFixture[str]
) -> None:
    tree = under_tree(mesh().by_name("Headache Disorders").ui)
    expected = matching(bundled, lambda c: bool(heading_uis(c) & tree))
    code, out, _ = run(
        capsys, "corpus", "search", "headache disorders[mh]", "--json", "--db", str(first_use[0])
    )
    doc = json.loads(out)
    assert code == 0 and doc["count"] == len(expected) > 20
    assert {r["pmid"] for r in doc["results"]} <= expected and len(doc["results"]) == 20  # default limit
    assert "narrower" in doc["translation"]
    code, out, _ = run(
        capsys,
        "corpus",
        "search",
        "headache disorders[mh]",
        "--json",
        "--db",
        str(first_use[0]),
        "--limit",
        "500",
    )
    assert {r["pmid"] for r in json.loads(out)["results"]} == expected


def test_search_text_output_and_date_order(
    first_use: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(first_use[0])
    code, out, err = run(
        capsys, "corpus", "search", "asthma AND 2000:2016[dp]", "--sort", "date", "--limit", "8", "--db", db
    )
    lines = out.splitlines()
    assert code == 0 and len(lines) == 8 and "citations match" in err
    years = []
    for i, line in enumerate(lines, 1):
        rank, pmid, year, title = line.split(maxsplit=3)
        assert int(rank) == i and pmid.isdigit() and title
        years.append(int(year))
    assert years == sorted(years, reverse=True) and all(2000 <= y <= 2016 for y in years)


@pytest.mark.parametrize(
    ("query", "part"),
    [
        ("smith[au] AND asthma", "[au] at position 6"),
        ("(asthma OR wheeze", "'(' at position 1 is never closed"),
        ("asthma AND", "operator AND at position 8 has no term after it"),
        ("headache disorderz[mh]", "'headache disorderz'[mh] at position 1 is not a MeSH heading"),
    ],
)
def test_bad_queries_give_a_clear_error(
    first_use: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str], query: str, part: str
) -> None:
    code, out, err = run(capsys, "corpus", "search", query, "--db", str(first_use[0]))
    assert code == 2 and out == ""
    assert err.startswith("ebm: error: ") and part in err and "Traceback" not in err


def test_stats_text(first_use: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "corpus", "stats", "--db", str(first_use[0]))
    stats = first_use[2]
    assert code == 0
    assert f"citations               {stats['citations']:,}" in out
    assert f"with MeSH headings      {stats['with_mesh']:,}" in out
    assert f"years                   {stats['year_min']}-{stats['year_max']}" in out


def test_ingest_a_directory_then_again_is_idempotent(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "mine.sqlite"
    files = sorted(f for f in (shared / "medline").iterdir() if f.is_file())
    records = {c.pmid: c for f in files for c in read_citations(f)}
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), str(shared / "medline"))
    assert code == 0 and f"stored {len(records):,} citations" in err and f"{len(records):,} new" in err
    code, out, _ = run(capsys, "corpus", "stats", "--json", "--db", str(db))
    first = json.loads(out)
    assert first["citations"] == len(records)
    assert first["with_mesh"] == sum(bool(c.mesh_headings) for c in records.values())
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), str(shared / "medline"))
    # each file is recorded once ingested whole: running them again skips them (ebm.store.ingest)
    assert code == 0 and "stored 0 citations" in err and f"skipped: {', '.join(f.name for f in files)}" in err
    code, out, _ = run(capsys, "corpus", "stats", "--json", "--db", str(db))
    assert json.loads(out) == first


def test_ingest_of_a_bad_file_names_it_and_loses_nothing(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "mine.sqlite"
    sample = shared / "medline" / "medsamp2006.xml"
    assert run(capsys, "corpus", "ingest", "--db", str(db), str(sample))[0] == 0
    before = json.loads(run(capsys, "corpus", "stats", "--json", "--db", str(db))[1])

    junk = tmp_path / "junk.xml"
    junk.write_text("<html><body>not PubMed</body></html>")
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), str(junk))
    assert code == 2 and "junk.xml" in err and "Traceback" not in err
    assert json.loads(run(capsys, "corpus", "stats", "--json", "--db", str(db))[1]) == before

    xml = gzip.decompress((shared / "medline" / "medline16n0902.xml.gz").read_bytes())
    truncated = tmp_path / "cut.xml.gz"
    truncated.write_bytes(gzip.compress(xml[: len(xml) // 3]))
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), str(truncated))
    assert code == 2 and "cut.xml.gz" in err and "nothing stored earlier was lost" in err
    after = json.loads(run(capsys, "corpus", "stats", "--json", "--db", str(db))[1])
    kept = after["citations"] - before["citations"]
    assert kept > 0 and f"stored {kept:,} citations" in err
    assert after["sources"]["medsamp2006.xml"] == before["citations"]


def test_missing_paths_and_stores_are_clear_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "new.sqlite"
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), str(tmp_path / "nope.xml"))
    assert code == 2 and "nope.xml: no such file" in err and not db.exists()
    code, _, err = run(capsys, "corpus", "search", "asthma", "--db", str(db))
    assert code == 2 and f"no MEDLINE store at {db}" in err and not db.exists()


# --- hardening (issue 12) -----------------------------------------------------------------


def _sample_records(shared: Path) -> tuple[str, list[str], str]:
    from tests.test_reader_hardening import split_records

    return split_records((shared / "medline" / "medsamp2006.xml").read_text(encoding="utf-8"))


def _pmid(record: str) -> str:
    m = re.search(r"<PMID>(\d+)</PMID>", record)
    assert m
    return m.group(1)


def test_ingest_counts_skipped_records_and_reports_cut_texts(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head, records, tail = _sample_records(shared)
    no_pmid = re.sub(r"<PMID>\d+</PMID>", "", records[6], count=1)
    huge = records[7].replace("<AbstractText>", "<AbstractText>" + "word " * 400_000, 1)  # 2 MB
    path = tmp_path / "odd.xml"
    path.write_text(head + "".join(records[:6]) + no_pmid + huge + "".join(records[8:10]) + tail)
    db = tmp_path / "odd.sqlite"
    # chunks of 2 records: notices are numbered from the file's start, not the chunk's
    code, _, err = run(
        capsys, "corpus", "ingest", "--db", str(db), "--batch-size", "2", "--workers", "0", str(path)
    )
    assert code == 0 and "Traceback" not in err
    assert "ebm: odd.xml: record 7: no PMID: skipped\n" in err  # a chunk's line would mislead: none
    assert f"ebm: odd.xml: record 8: PMID {_pmid(records[7])}: abstract of 2,0" in err
    assert "cut to 100,000 (declared caps)" in err and "1 records skipped" in err
    stats = json.loads(run(capsys, "corpus", "stats", "--json", "--db", str(db))[1])
    assert stats["citations"] == 9
    from ebm.store import MedlineStore

    with MedlineStore(db, vocabulary=shipped_mesh) as store:
        c = store.get(_pmid(records[7]))
        assert c is not None and sum(len(s.text) for s in c.abstract or ()) == 100_000


def test_ingest_refuses_a_pmid_that_is_not_a_number_and_keeps_the_rest(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head, records, tail = _sample_records(shared)
    bad = re.sub(r"<PMID>\d+</PMID>", "<PMID>not-a-number</PMID>", records[4], count=1)
    path = tmp_path / "bad.xml"
    path.write_text(head + "".join(records[:4]) + bad + records[5] + tail)
    db = tmp_path / "bad.sqlite"
    code, out, err = run(capsys, "corpus", "ingest", "--db", str(db), "--workers", "0", str(path))
    assert code == 2 and out == "" and "Traceback" not in err
    assert re.search(r"bad\.xml: record 5: PMID 'not-a-number' \(line \d+\) is not a number", err)
    assert "nothing stored earlier was lost" in err
    stats = json.loads(run(capsys, "corpus", "stats", "--json", "--db", str(db))[1])
    assert stats["citations"] == 4  # the records before it
    assert (
        "not-a-number"
        not in run(capsys, "corpus", "search", "hasabstract", "--limit", "100", "--db", str(db))[1]
    )


def test_search_cuts_long_titles_for_the_terminal(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head, records, tail = _sample_records(shared)
    long_title = records[0].replace("<ArticleTitle>", "<ArticleTitle>" + "title " * 200_000, 1)  # 1.2 MB
    path = tmp_path / "long.xml"
    path.write_text(head + long_title + tail)
    db = tmp_path / "long.sqlite"
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), "--workers", "0", str(path))
    assert code == 0 and "title of 1,200,1" in err and "cut to 5,000" in err
    code, out, _ = run(capsys, "corpus", "search", f"{_pmid(records[0])}[pmid]", "--db", str(db))
    (line,) = out.splitlines()
    assert code == 0 and len(line) < 340 and line.endswith("…")
    code, out, _ = run(capsys, "corpus", "search", f"{_pmid(records[0])}[pmid]", "--json", "--db", str(db))
    assert len(json.loads(out)["results"][0]["title"]) == 5_000  # whole (as stored) in --json


def test_a_query_starting_with_a_dash_needs_the_double_dash(
    first_use: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["corpus", "search", "-fever", "--db", str(first_use[0])])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "goes after '--'" in err and "ebm corpus search -- '-fever'" in err
    code, out, err = run(capsys, "corpus", "search", "--db", str(first_use[0]), "--", "-fever")
    assert code == 0 and out.strip() and "citations match" in err


def test_large_and_deep_queries_on_the_command_line(
    first_use: tuple[Path, str, dict], capsys: pytest.CaptureFixture[str], bundled: list[Citation]
) -> None:
    db = str(first_use[0])
    words = ["fever", "asthma", "cough", "otitis", "wheezing", "ibuprofen"] * 100  # 600 ORed terms
    code, out, err = run(
        capsys, "corpus", "search", " OR ".join(f"{w}[tiab]" for w in words), "--json", "--db", db
    )
    want = matching(bundled, lambda c: any(in_tiab(c, w) for w in set(words)))
    assert code == 0 and json.loads(out)["count"] == len(want)
    deep = "asthma"
    for i in range(2000):
        deep = f"w{i} {('AND', 'OR')[i % 2]} ({deep})"
    code, out, err = run(capsys, "corpus", "search", deep, "--db", db)
    assert code == 2 and out == "" and "Traceback" not in err
    assert (
        err
        == "ebm: error: query nests 2000 levels of different operators; the local store takes at most 200\n"
    )


def test_ebm_home_pointing_at_a_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a directory")
    monkeypatch.setenv("EBM_HOME", str(home))
    code, out, err = run(capsys, "corpus", "stats")
    assert code == 2 and out == ""
    why = "is a file, not a directory: point EBM_HOME at a directory (or unset it)"
    assert err == f"ebm: error: EBM_HOME={home} {why}\n"


def test_a_huge_abstract_in_medline_text_format_is_cut_and_reported(
    tmp_path: Path, shared: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = (shared / "eutils" / "one-pmid-all-formats" / "20000000.medline").read_text()
    path = tmp_path / "huge.nbib"
    path.write_text(re.sub(r"^AB  - ", "AB  - " + "word " * 30_000, text, count=1, flags=re.M))
    db = tmp_path / "nbib.sqlite"
    code, _, err = run(capsys, "corpus", "ingest", "--db", str(db), "--workers", "0", str(path))
    assert code == 0 and re.search(
        r"ebm: huge\.nbib: PMID 20000000: abstract of 15\d,\d{3} characters cut", err
    )
    from ebm.store import MedlineStore

    with MedlineStore(db, vocabulary=shipped_mesh) as store:
        c = store.get("20000000")
        assert c is not None and sum(len(s.text) for s in c.abstract or ()) == 100_000
