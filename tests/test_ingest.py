"""Parallel ingest of real distribution files (ebm.store.ingest): PubMed baseline and update slices,
efetch records, MEDLINE text exports; file records, idempotence, order, deletions, resume, errors."""

from __future__ import annotations

import dataclasses
import gzip
import os
import signal
import sqlite3
import subprocess
import tarfile
import time
from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.medline.nbib import read_nbib
from ebm.medline.reader import Deletion, read_citations, read_records
from ebm.mesh import mesh as shipped_mesh
from ebm.store.ingest import IngestSummary, file_seq, ingest_files
from ebm.store.sqlite import MedlineStore
from tests.test_store import ingest_command

SAMPLES = ("pubmed20n1016-sample.xml.gz", "pubmed26n1334-sample.xml.gz", "pubmed26n1335-update-sample.xml.gz")


@pytest.fixture(scope="module")
def pm(shared: Path) -> Path:
    return shared / "medline" / "pmparser-samples"


@pytest.fixture(scope="module")
def efetch_dir(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("efetch")
    with tarfile.open(shared / "medline" / "metapub-efetch" / "pmid_xml.tar.gz") as tar:
        tar.extractall(out, filter="data")
    return out / "pmid_xml"


def _expected(files: list[Path]) -> dict[str, object]:
    """PMID -> citation as the single-process reader gives it, later files winning, deletions applied."""
    kept: dict[str, object] = {}
    for f in files:
        reader = read_nbib(f) if f.suffix in (".txt", ".medline") else read_records(f)
        for r in reader:
            if isinstance(r, Deletion):
                for p in r.pmids:
                    kept.pop(p, None)
            else:
                kept[r.pmid] = r
    return kept


@pytest.mark.parametrize(("workers", "chunk"), [(2, 7), (0, 2000)])
def test_parallel_ingest_stores_what_the_readers_read(
    tmp_path: Path, pm: Path, efetch_dir: Path, shared: Path, workers: int, chunk: int
) -> None:
    files = [pm / s for s in SAMPLES] + sorted(efetch_dir.glob("*.xml"))
    files.append(shared / "eutils" / "biopython" / "pubmed_result2.txt")
    expected = _expected(files)
    assert len(expected) == 26 + 30 + 30 + 163 + 4
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as store:
        summary = ingest_files(store, files, workers=workers, chunk_size=chunk)
        assert summary.read == len(expected) and summary.added == len(expected) and summary.replaced == 0
        assert summary.files == [f.name for f in files]  # every file recorded, in order
        assert len(store) == len(expected)
        assert store.fetch(sorted(expected)) == [expected[p] for p in sorted(expected)]
        records = {r.name: r for r in store.file_records()}
        assert records["pubmed26n1334-sample.xml.gz"].citations == 30
        assert records["pubmed26n1335-update-sample.xml.gz"].seq == "26n1335"
        assert records["pubmed_result2.txt"].seq is None
        store.check()
        # the nbib records are searchable by their MeSH and publication types like XML ones
        assert store.search_hits("Software[majr] AND journal article[pt]", limit=50).count >= 3


def test_rerun_is_idempotent_and_older_files_are_reported(tmp_path: Path, pm: Path) -> None:
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as store:
        first = ingest_files(store, [pm / SAMPLES[2]], workers=0)
        assert first.files == [SAMPLES[2]] and first.added == 30
        again = ingest_files(store, [pm / SAMPLES[2]], workers=0)
        assert again.skipped == [SAMPLES[2]] and again.read == 0 and again.batches == 0
        # the 2026 baseline slice (n1334) after the update file (n1335): older, reported, not applied
        older = ingest_files(store, [pm / SAMPLES[1], pm / SAMPLES[0]], workers=0)
        assert older.older == [SAMPLES[1], SAMPLES[0]] and older.read == 0 and len(store) == 30
        applied = ingest_files(store, [pm / SAMPLES[1]], workers=0, allow_older=True)
        assert applied.older == [SAMPLES[1]] and applied.added == 30 and len(store) == 60
    with MedlineStore(tmp_path / "t.sqlite", vocabulary=shipped_mesh) as store:  # out of order within one run
        summary = ingest_files(store, [pm / SAMPLES[2], pm / SAMPLES[1]], workers=0)
        assert summary.files == [SAMPLES[2]] and summary.older == [SAMPLES[1]]
    assert file_seq("pubmed26n1335.xml.gz") == "26n1335" and file_seq("medline16n0902.xml.gz") == "16n0902"
    assert file_seq("export.nbib") is None


def _renamed(xml: bytes, old: str, new: str) -> bytes:
    return xml.replace(f">{old}</PMID>".encode(), f">{new}</PMID>".encode())


def test_deletions_and_newer_versions(tmp_path: Path, pm: Path) -> None:
    update = pm / SAMPLES[2]
    deleted = [p for r in read_records(update) if isinstance(r, Deletion) for p in r.pmids]
    assert len(deleted) == 6
    # a baseline holding real records under the PMIDs the update file deletes
    baseline = gzip.decompress((pm / SAMPLES[1]).read_bytes())
    base_pmids = [c.pmid for c in read_citations(baseline)]
    for old, new in zip(base_pmids, deleted, strict=False):
        baseline = _renamed(baseline, old, new)
    (tmp_path / "pubmed26n1300.xml").write_bytes(baseline)
    # a later file with a corrected title for one PMID of the baseline
    first = next(read_citations(baseline))
    fixed = baseline.replace(first.title.encode(), b"Corrected title.", 1)
    (tmp_path / "pubmed26n1336.xml").write_bytes(fixed)
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as store:
        ingest_files(store, [tmp_path / "pubmed26n1300.xml"], workers=2, chunk_size=4)
        assert all(p in store for p in deleted)
        summary = ingest_files(store, [update], workers=2, chunk_size=4)
        assert summary.deleted == 6 and not any(p in store for p in deleted) and len(store) == 24 + 30
        assert store.get(first.pmid) is None  # first was renamed to a deleted PMID
        later = ingest_files(store, [tmp_path / "pubmed26n1336.xml"], workers=2, chunk_size=4)
        assert later.replaced == 24 and later.added == 6  # the deleted PMIDs come back with n1336
        assert store.get(first.pmid).title == "Corrected title."
        assert (
            store.get(base_pmids[10]).title
            == next(c for c in read_citations(fixed) if c.pmid == base_pmids[10]).title
        )
        records = {r.name: r for r in store.file_records()}
        assert records[SAMPLES[2]].deleted == 6 and records[SAMPLES[2]].citations == 30


def test_interrupted_ingest_resumes(tmp_path: Path, pm: Path, efetch_dir: Path) -> None:
    files = [pm / SAMPLES[1], pm / SAMPLES[2]]
    with MedlineStore(tmp_path / "clean.sqlite", vocabulary=shipped_mesh) as store:
        ingest_files(store, files, workers=0)
        clean = store.stats()
        clean_records = sorted(store.iter_citations(), key=lambda c: c.pmid)
    calls = []

    def interrupt(n: int, name: str) -> None:
        calls.append(name)
        if len(calls) == 3:  # third chunk of n1334 committed, then Ctrl-C
            raise KeyboardInterrupt

    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as store:
        summary = IngestSummary()
        with pytest.raises(KeyboardInterrupt):
            ingest_files(store, files, workers=2, chunk_size=5, summary=summary, on_chunk=interrupt)
        assert len(store) == 15 and summary.stored == 15 and store.file_records() == []
        resumed = ingest_files(store, files, workers=2, chunk_size=5)
        assert resumed.files == [SAMPLES[1], SAMPLES[2]] and resumed.replaced == 15
        assert dataclasses.replace(store.stats(), path=clean.path) == clean
        assert sorted(store.iter_citations(), key=lambda c: c.pmid) == clean_records
        store.check()


def test_malformed_file_keeps_earlier_chunks_and_names_the_place(tmp_path: Path, pm: Path) -> None:
    xml = gzip.decompress((pm / SAMPLES[1]).read_bytes())
    cut = tmp_path / "cut.xml.gz"
    cut.write_bytes(gzip.compress(xml[: len(xml) // 2]))
    bad = tmp_path / "bad.nbib"
    bad.write_text("PMID- 1\nTI  - one\n\nPMID- 2\nTI  - two\n\nPMID- 3\nbroken line\n")
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=shipped_mesh) as store:
        summary = IngestSummary()
        with pytest.raises(InputError, match=r"cut\.xml\.gz: truncated or malformed XML"):
            ingest_files(store, [cut], workers=2, chunk_size=3, summary=summary)
        n = len(store)
        assert 0 < n < 30 and summary.stored == n and store.file_records() == []
        with pytest.raises(InputError, match=r"bad\.nbib:8: not MEDLINE text format"):
            ingest_files(store, [bad], workers=2, chunk_size=1)
        assert "1" in store and "2" in store and "3" not in store
        junk = tmp_path / "junk.txt"
        junk.write_text("hello\n")
        before = len(store)
        with pytest.raises(InputError, match="junk.txt: neither PubMed XML nor MEDLINE text format"):
            ingest_files(store, [pm / SAMPLES[1], junk], workers=0)  # checked before anything is written
        assert len(store) == before


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_exit_when_the_writer_is_killed(tmp_path: Path, shared: Path) -> None:
    db = tmp_path / "killed.sqlite"
    medline = shared / "medline" / "medline16n0902.xml.gz"
    cmd = ingest_command(db, "--workers", "2", str(medline))
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        n = 0
        while n < 20 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
            if db.exists():
                with sqlite3.connect(db, timeout=30) as peek:
                    tables = {r[0] for r in peek.execute("SELECT name FROM sqlite_master")}
                    n = (
                        peek.execute("SELECT count(*) FROM citations").fetchone()[0]
                        if "citations" in tables
                        else 0
                    )
        workers = _children(proc.pid)
        assert proc.poll() is None and len(workers) == 2, "ingest finished before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers)
    with MedlineStore(db, vocabulary=shipped_mesh) as store:
        assert store.file_records() == [] and len(store) >= 20
        store.check()
        summary = ingest_files(store, [medline], workers=2)  # and the ingest resumes
        assert summary.files == [medline.name] and len(store) == 604
