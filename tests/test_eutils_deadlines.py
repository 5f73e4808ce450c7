"""Deadlines on PubMed: every request and every question ends in bounded time, whatever the
server does (refuses, accepts and never answers, trickles one byte at a time), and the query
ladder stops at the first failure of the connection instead of retrying each relaxation.

The server is the local E-utilities replay server (tests/eutils_server.py); times are wall
clock, bounds generous enough for a loaded 2-core machine yet far below the old behaviour
(52 s refused, 15 min hanging, never for a trickle).
"""

from __future__ import annotations

import functools
import re
import socket
import time
from pathlib import Path

import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.errors import InputError, ServiceError
from ebm.frame import frame_from_dict
from ebm.pubmed import EUtils, PubMedSource
from ebm.source import DeadlineExceeded, SourceUnavailable, deadline
from tests.eutils_server import (  # noqa: F401 - the fixtures
    EutilsServer,
    Fault,
    clean_eutils_env,
    eutils_server_fixture,
    nothing_but_loopback,
)

pytestmark = pytest.mark.usefixtures("clean_eutils_env", "nothing_but_loopback")

# A frame whose ladder has several steps (comparison, intervention, population dropped...).
FEVER = {
    "task": "therapy",
    "problem": "acute febrile illness",
    "population": "children",
    "intervention": "acetaminophen",
    "comparison": "ibuprofen",
}


def _free_port() -> int:
    with socket.socket() as s:  # bound, then closed: nobody listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@functools.cache
def _resources():  # type: ignore[no-untyped-def]
    """The shipped rules and MeSH (``ebm.resources``), loaded once, before any clock starts."""
    from ebm.resources import Resources

    return Resources.load()


def retrieve(frame, source, **kw):  # type: ignore[no-untyped-def]
    """``ebm.query.retrieve`` with the shipped rules and MeSH."""
    from ebm.query import retrieve as run

    r = _resources()
    return run(frame, source, rules=r.rules, vocabulary=r.vocabulary, **kw)


def _client(url: str, **kw: object) -> EUtils:
    options: dict[str, object] = dict(rate=1000.0, cache=False)  # NCBI's timeout/backoff/tries
    options.update(kw)
    return EUtils(url, **options)  # type: ignore[arg-type]


def test_refused_connection_fails_at_once_and_stops_the_ladder() -> None:
    c = _client(f"http://127.0.0.1:{_free_port()}/entrez/eutils/")
    _resources()
    started = time.monotonic()
    refused = r"esearch term=.* failed at http://127\.0\.0\.1:\d+/.*cannot connect"
    with pytest.raises(SourceUnavailable, match=refused):
        retrieve(frame_from_dict(FEVER), PubMedSource(c), min_hits=50)
    assert time.monotonic() - started < 2.0  # was 52 s: 4 tries for each of 7 relaxation steps
    assert c.requests_sent == 1  # one try, one query: the ladder stopped


def test_hanging_server_ends_at_the_request_deadline(eutils_server: EutilsServer) -> None:
    """Accepts, never answers: the per-read timeout (30 s) is not reached; the total is."""
    eutils_server.inject(*[Fault("stall", seconds=120.0)] * 10)
    c = _client(eutils_server.url, deadline=1.0)
    _resources()
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"no complete answer within the request's deadline of 1 s"):
        retrieve(frame_from_dict(FEVER), PubMedSource(c), min_hits=50)
    assert 0.9 < time.monotonic() - started < 3.0
    assert [s.fault for s in eutils_server.requests()] == ["stall"]  # no second query of the ladder


def test_trickling_server_ends_at_the_request_deadline(eutils_server: EutilsServer) -> None:
    """One byte every 0.2 s: every read gets something before its 5 s timeout; only the
    request's total deadline ends it (in the headers, before any body arrived)."""
    eutils_server.inject(*[Fault("trickle", seconds=0.2)] * 10)
    c = _client(eutils_server.url, timeout=5.0, deadline=1.5)
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"within the request's deadline of 1.5 s"):
        c.esearch("biopython")
    assert 1.4 < time.monotonic() - started < 3.5
    assert len(eutils_server.requests()) == 1


def test_trickle_that_finishes_in_time_is_an_answer(eutils_server: EutilsServer) -> None:
    """The deadline ends slow answers, not correct ones: a fast trickle is read to the end."""
    eutils_server.inject(Fault("trickle", seconds=0.0005))
    assert _client(eutils_server.url, deadline=30.0).esearch("biopython").count == 63


def test_question_deadline_bounds_a_whole_question(eutils_server: EutilsServer, concept_index: Path) -> None:
    """The question's deadline (AskConfig.deadline_s) is shorter than the request's: it binds,
    and the error says it was the question's."""
    eutils_server.inject(*[Fault("stall", seconds=120.0)] * 10)
    source = PubMedSource(_client(eutils_server.url, deadline=60.0))
    config = AskConfig(source="pubmed", deadline_s=1.5, cache=False)
    with Pipeline(config, source=source) as p:
        p.concepts(frame_from_dict(FEVER))  # the concept index loaded before the clock starts
        started = time.monotonic()
        with pytest.raises(DeadlineExceeded, match=r"esearch .* within the question's deadline of 1.5 s"):
            p.ask(frame_from_dict(FEVER))
    assert 1.4 < time.monotonic() - started < 3.5


def test_retries_stop_when_the_pause_would_pass_the_deadline(eutils_server: EutilsServer) -> None:
    """A 503 with Retry-After 5 inside a 1 s deadline: no sleeping past it."""
    eutils_server.inject(Fault("status", status=503, retry_after="5"))
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"deadline of 1 s .*HTTP 503"):
        _client(eutils_server.url, deadline=1.0).esearch("biopython")
    assert time.monotonic() - started < 1.0


def test_failing_server_stops_the_ladder_but_a_refused_query_does_not(eutils_server: EutilsServer) -> None:
    # HTTP 500 on every try: the server is failing, not the query.
    eutils_server.inject(*[Fault("status", status=500)] * 20)
    c = _client(eutils_server.url, backoff=0.01, max_tries=2)
    with pytest.raises(SourceUnavailable, match="after 2 tries; last failure: HTTP 500"):
        retrieve(frame_from_dict(FEVER), PubMedSource(c), min_hits=50)
    assert len(eutils_server.requests()) == 2
    # HTTP 400 (the replay server has no recording of these queries): each query is refused
    # on its own, the ladder goes on to the looser ones and the last refusal is reported.
    seen = len(eutils_server.requests())
    eutils_server._faults.clear()
    with pytest.raises(ServiceError, match="HTTP 400") as caught:
        retrieve(frame_from_dict(FEVER), PubMedSource(_client(eutils_server.url)), min_hits=50)
    assert not isinstance(caught.value, SourceUnavailable)
    assert len(eutils_server.requests()) - seen > 1


def test_deadline_check_before_each_step() -> None:
    with deadline(0.001):
        time.sleep(0.01)
        with pytest.raises(DeadlineExceeded, match=r"deadline of 0.001 s \(stopped before query 1"):
            retrieve(frame_from_dict(FEVER), PubMedSource(_client("http://127.0.0.1:9/")), min_hits=1)


def test_bad_deadlines_are_input_errors() -> None:
    with pytest.raises(InputError, match="deadline must be a positive number"):
        AskConfig(deadline_s=0)
    with pytest.raises(InputError, match="timeout and deadline must be > 0"):
        EUtils("http://127.0.0.1:9/", deadline=-1)


def test_ebm_ask_deadline_flag(
    eutils_server: EutilsServer, concept_index: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """`ebm ask --source pubmed --deadline 8` on a server that never answers: a one-line
    error naming the deadline, exit 2, in about 8 s (loading the concept index counts); a bad
    --deadline is refused."""
    from ebm.cli import main

    monkeypatch.setenv("EBM_HOME", str(concept_index.parent))
    monkeypatch.setenv("EBM_EUTILS_URL", eutils_server.url)
    eutils_server.inject(*[Fault("stall", seconds=120.0)] * 10)
    question = ["ask", "--task", "therapy", "--problem", "leg cramps", "--source", "pubmed", "--no-cache"]
    started = time.monotonic()
    assert main([*question, "--deadline", "8"]) == 2
    assert time.monotonic() - started < 11.0
    err = capsys.readouterr().err
    assert re.fullmatch(
        r"ebm: error: esearch term=.* failed at http://127\.0\.0\.1:\d+/entrez/eutils/esearch\.fcgi: "
        r"no complete answer within the question's deadline of 8 s \(1 try; last failure: no attempt\)\n",
        err,
    ), err
    assert len(eutils_server.requests()) == 1
    assert main([*question, "--deadline", "0"]) == 2
    assert "deadline must be a positive number of seconds, got 0.0" in capsys.readouterr().err
