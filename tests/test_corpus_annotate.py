"""``ebm corpus annotate`` on a local Dask cluster (loopback, 2 worker processes): the stored
annotations equal question-time annotations, a re-run annotates only what is missing, and a
worker killed mid-run loses only its batch (issue 17)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys

import pytest

from tests.test_store_annotations import sample_citations


@pytest.fixture(autouse=True)
def _restore_pickling():
    """Importing distributed installs tblib's exception pickling (copyreg) for every exception
    class then defined; undone afterwards so later tests pickle exceptions as without Dask."""
    import copyreg

    saved = dict(copyreg.dispatch_table)
    yield
    copyreg.dispatch_table.clear()
    copyreg.dispatch_table.update(saved)


@pytest.fixture
def cluster():
    """Built inside the test's EBM_HOME (the workers inherit it: the tests' concept index)."""
    from ebm.store.annotate_dask import local_cluster

    c = local_cluster(2)
    yield c
    c.close()


def test_annotate_on_dask_resumes_and_survives_a_killed_worker(tmp_path, resources, cluster) -> None:
    from dask.distributed import Client

    from ebm.annotation_cache import annotation_version
    from ebm.store.annotate_dask import annotate_store
    from ebm.store.sqlite import MedlineStore
    from extractors.annotate import Annotator

    citations = sample_citations()[10:]  # 30: a loaded 2-core machine runs this in well under a minute
    version = annotation_version(resources)
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=resources.vocabulary) as store:
        store.ingest(citations)
        first = annotate_store(
            store, version, resources.rules_dir, scheduler=address, batch=4, limit=8, progress=False
        )
        assert (first.todo, first.annotated, first.workers) == (8, 8, 2)
        assert len(store.unannotated(version)) == len(citations) - 8

        with Client(address) as client:
            pids = client.run(os.getpid)  # worker address -> process id
        killed: list[int] = []

        def kill_one(done: int) -> None:
            if not killed:  # after the first stored batch: one worker dies with its batches
                pid = next(iter(pids.values()))
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

        rest = annotate_store(
            store, version, resources.rules_dir, scheduler=address, batch=4, progress=False, on_batch=kill_one
        )
        assert killed and rest.todo == rest.annotated == len(citations) - 8
        assert store.unannotated(version) == [] and store.annotated_count(version) == len(citations)
        again = annotate_store(store, version, resources.rules_dir, scheduler=address, progress=False)
        assert (again.todo, again.annotated) == (0, 0)  # resumable: nothing left to do

        # what the workers stored is what ebm ask would have computed at question time (from
        # the store's records, as ebm ask fetches them)
        annotator = Annotator(resources)
        fetched = store.fetch([c.pmid for c in citations])
        stored = store.stored_annotations(version, fetched)
        differ = [
            (c.pmid, f.name)
            for c in fetched
            for a in [annotator.annotate(c)]
            for f in dataclasses.fields(a)
            if getattr(a, f.name) != getattr(stored[c.pmid], f.name)
        ]
        assert differ == []


def test_cli_refuses_bad_options(tmp_path) -> None:
    for args, message in (
        (["--since", "last week"], "--since 'last week': write a date as YYYY"),
        (["--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "give --workers"),
    ):
        run = subprocess.run(
            [sys.executable, "-m", "ebm", "corpus", "annotate", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 2 and message in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
