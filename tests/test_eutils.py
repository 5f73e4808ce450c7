"""E-utilities client and PubMedSource against a real local HTTP server (tests/eutils_server.py).

The server replays real NCBI responses from ../shared/data/eutils and injects faults; all
counts and pauses below are measured on the server's side.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from ebm.errors import InputError, ServiceError
from ebm.pubmed import DEFAULT_BASE_URL, EUtils, PubMedSource, ResponseCache
from ebm.pubmed.eutils import parse_esearch
from tests import netguard
from tests.eutils_server import (  # noqa: F401 - the fixtures
    EutilsServer,
    Fault,
    clean_eutils_env,
    eutils_server_fixture,
    nothing_but_loopback,
)

pytestmark = pytest.mark.usefixtures("clean_eutils_env", "nothing_but_loopback")

CANCER_WEBENV = "NCID_1_18991374_130.14.18.48_5555_1353814292_87026138"
# The real PubmedArticle records the server can serve (see EFETCH_FILES), with their titles.
REAL = {
    "17284678": "Sequencing and analysis of chromosome 1 of Eimeria tenella reveals a unique segmental "
    "organization.",
    "9997": "Magnetic studies of Chromatium flavocytochrome C552. A mechanism for heme-flavin interaction.",
    "12091962": "The treatment of AIDS behind the walls of correctional facilities.",
    "20000000": "Long-term impact of municipal sewage irrigation on treated soil and black locust trees in a "
    "semi-arid suburban area of Iran.",
}


def client(server: EutilsServer, **kw: object) -> EUtils:
    """A fast client: no rate pause (unless a test sets ``rate``), tiny backoff, no cache."""
    options: dict[str, object] = dict(
        email="dev@example.org", rate=1000.0, backoff=0.01, timeout=5.0, cache=False
    )
    options.update(kw)
    return EUtils(server.url, **options)  # type: ignore[arg-type]


def gaps(seen: list) -> list[float]:
    times = sorted(s.time for s in seen)
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def max_in_window(seen: list, window: float = 1.0) -> int:
    times = sorted(s.time for s in seen)
    return max(sum(1 for t in times[i:] if t - start < window) for i, start in enumerate(times))


# --- esearch ------------------------------------------------------------------------------


def test_esearch_with_history_dates_and_sort(eutils_server: EutilsServer) -> None:
    c = client(eutils_server)
    r = c.esearch(
        "cancer", retmax=100, sort="relevance", mindate="2012/09/25", maxdate="2012/11/24", datetype="edat",
        usehistory=True,
    )  # fmt: skip
    assert (r.count, r.retmax, r.retstart, len(r.ids)) == (15169, 100, 0, 100)
    assert r.ids[:3] == ("23175848", "23175808", "23175797") and r.ids[-1] == "23174999"
    assert (r.webenv, r.query_key) == (CANCER_WEBENV, "1")
    assert r.query_translation.endswith("AND 2012/09/25[EDAT] : 2012/11/24[EDAT]")
    assert r.translations == (
        ("cancer", '"neoplasms"[MeSH Terms] OR "neoplasms"[All Fields] OR "cancer"[All Fields]'),
    )
    (seen,) = eutils_server.requests()
    assert seen.method == "GET" and seen.utility == "esearch.fcgi"
    assert seen.params == {
        "db": "pubmed", "term": "cancer", "retmax": "100", "retstart": "0", "sort": "relevance",
        "mindate": "2012/09/25", "maxdate": "2012/11/24", "datetype": "edat", "usehistory": "y",
        "tool": "ebm", "email": "dev@example.org",
    }  # fmt: skip
    assert c.requests_sent == len(eutils_server.requests()) == 1


def test_esearch_reports_ncbi_error_and_warning_lists(eutils_server: EutilsServer) -> None:
    c = client(eutils_server)
    none = c.esearch("abcXYZ")
    assert (none.count, none.ids) == (0, ())
    assert none.errors == ("PhraseNotFound: abcXYZ",)
    assert none.warnings == ("OutputMessage: No items found.",)
    partial = c.esearch("obstetrics[mh] OR fleegle[mh]")
    assert partial.count == 5163 and len(partial.ids) == 20
    assert partial.errors == ("PhraseNotFound: fleegle[MeSH Terms]",)
    assert partial.query_translation == '"obstetrics"[MeSH Terms]'


def test_parse_esearch_on_real_paged_response(shared: Path) -> None:
    r = parse_esearch((shared / "eutils/biopython/esearch3.xml").read_bytes())
    assert (r.count, r.retmax, r.retstart) == (2651, 6, 6)
    assert r.ids == ("11121077", "11121076", "11121075", "11121074", "11121073", "11121072")
    assert r.query_translation == '"proc natl acad sci u s a"[Journal] AND "97"[Volume]'
    assert r.webenv is None and r.errors == ()


def test_ncbi_error_body_is_a_clear_error_without_retry(eutils_server: EutilsServer) -> None:
    with pytest.raises(ServiceError) as err:
        client(eutils_server).esearch("cancer", db="fleegle")
    message = str(err.value)
    assert "Invalid db name specified: fleegle" in message
    assert "esearch term='cancer'" in message and eutils_server.url + "esearch.fcgi" in message
    assert len(eutils_server.requests()) == 1  # a definitive answer is not retried


def test_injected_error_body_on_efetch(eutils_server: EutilsServer, shared: Path) -> None:
    eutils_server.inject(
        Fault("body", body=(shared / "eutils/ncbi-samples/esearch.baderror.xml").read_bytes())
    )
    with pytest.raises(ServiceError, match=r"efetch of 1 id\(s\) from 9997 failed .*Invalid db name"):
        client(eutils_server).efetch(["9997"])
    assert len(eutils_server.requests()) == 1


def test_transient_backend_error_body_is_retried(eutils_server: EutilsServer, shared: Path) -> None:
    # NCBI answers backend hiccups with HTTP 200 and this <ERROR> text (biopython#3890).
    real = (shared / "eutils/ncbi-samples/esearch.baderror.xml").read_bytes()
    body = real.replace(
        b"Invalid db name specified: fleegle", b"Search Backend failed: Unable to open connection"
    )
    eutils_server.inject(Fault("body", body=body))
    r = client(eutils_server).esearch("biopython")
    assert r.count == 63
    assert [s.fault for s in eutils_server.requests()] == ["body", None]


def test_http_400_is_not_retried(eutils_server: EutilsServer) -> None:
    with pytest.raises(ServiceError, match="HTTP 400.*no recorded esearch response"):
        client(eutils_server).esearch("no such recording")
    assert len(eutils_server.requests()) == 1


# --- retries ------------------------------------------------------------------------------


def test_429_then_success_honours_retry_after(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("status", status=429, retry_after="0.6"))
    c = client(eutils_server, backoff=0.01)
    assert c.esearch("biopython").count == 63
    seen = eutils_server.requests()
    assert [s.fault for s in seen] == ["status", None]
    assert gaps(seen)[0] >= 0.6  # Retry-After, not the 0.01 s backoff
    assert c.requests_sent == 2


def test_500_then_success_with_exponential_backoff(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("status", status=500), Fault("status", status=503))
    assert client(eutils_server, backoff=0.15).esearch("biopython").count == 63
    seen = eutils_server.requests()
    assert [s.fault for s in seen] == ["status", "status", None]
    first, second = gaps(seen)
    assert 0.15 <= first < 1.0 and 0.30 <= second < 1.5  # 0.15 s, then doubled


def test_persistent_500_gives_service_error_naming_url_and_last_failure(eutils_server: EutilsServer) -> None:
    eutils_server.inject(*[Fault("status", status=500)] * 3)
    c = client(eutils_server, max_tries=3)
    with pytest.raises(ServiceError) as err:
        c.esearch("biopython")
    message = str(err.value)
    assert "esearch term='biopython'" in message and eutils_server.url + "esearch.fcgi" in message
    assert "after 3 tries" in message and "HTTP 500" in message
    assert len(eutils_server.requests()) == 3 == c.requests_sent


def test_persistent_429_names_the_limit_but_never_the_api_key(eutils_server: EutilsServer, caplog) -> None:
    eutils_server.inject(*[Fault("status", status=429)] * 2)
    with pytest.raises(ServiceError) as err:
        client(eutils_server, max_tries=2, api_key="SECRET-KEY").esearch("biopython")
    assert "HTTP 429" in str(err.value) and "API rate limit exceeded" in str(err.value)
    assert eutils_server.requests()[0].params["api_key"] == "SECRET-KEY"  # sent, and echoed by the server
    assert "try 1/2 failed (HTTP 429" in caplog.text  # the retry was logged...
    assert "SECRET-KEY" not in str(err.value) and "SECRET-KEY" not in caplog.text  # ...without the key
    assert "<api_key>" in str(err.value)


def test_retry_after_beyond_limit_fails_at_once(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("status", status=429, retry_after="3600"))
    with pytest.raises(ServiceError, match="retry after 3600 s.*HTTP 429"):
        client(eutils_server, max_retry_after=60).esearch("biopython")
    assert len(eutils_server.requests()) == 1


def test_stalled_response_times_out_and_is_retried(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("stall", seconds=5.0))
    started = time.monotonic()
    assert client(eutils_server, timeout=0.3).esearch("biopython").count == 63
    assert time.monotonic() - started < 3.0  # did not wait for the stalled answer
    assert [s.fault for s in eutils_server.requests()] == ["stall", None]


def test_persistent_stall_gives_timeout_error(eutils_server: EutilsServer) -> None:
    eutils_server.inject(*[Fault("stall", seconds=5.0)] * 2)
    with pytest.raises(
        ServiceError, match=r"after 2 tries; last failure: no response within 0.3 s \(timeout\)"
    ):
        client(eutils_server, timeout=0.3, max_tries=2).esearch("biopython")
    assert len(eutils_server.requests()) == 2


def test_truncated_xml_is_detected_and_retried(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("truncate", utility="efetch.fcgi"))
    body = client(eutils_server).efetch(["17284678", "9997"])
    assert body.rstrip().endswith(b"</PubmedArticleSet>")
    seen = eutils_server.requests()
    assert [s.fault for s in seen] == ["truncate", None]
    assert seen[0].params == seen[1].params


def test_persistent_truncation_is_reported(eutils_server: EutilsServer) -> None:
    eutils_server.inject(*[Fault("truncate")] * 2)
    with pytest.raises(ServiceError, match="after 2 tries; last failure: truncated or malformed XML"):
        client(eutils_server, max_tries=2).efetch(["17284678", "9997"])


def test_body_shorter_than_content_length_is_retried(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("short"))
    assert client(eutils_server).esearch("biopython").count == 63
    assert [s.fault for s in eutils_server.requests()] == ["short", None]


def test_connection_reset_is_retried(eutils_server: EutilsServer) -> None:
    eutils_server.inject(Fault("reset"), Fault("reset"))
    assert client(eutils_server).esearch("biopython").count == 63
    assert [s.fault for s in eutils_server.requests()] == ["reset", "reset", None]


def test_connection_refused_gives_service_error() -> None:
    import socket

    with socket.socket() as s:  # a free loopback port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = EUtils(f"http://127.0.0.1:{port}/entrez/eutils/", rate=1000, backoff=0.01, max_tries=2, cache=False)
    refused = r"failed at http://127\.0\.0\.1:\d+/entrez/eutils/esearch\.fcgi: cannot connect"
    with pytest.raises(ServiceError, match=refused):
        c.esearch("biopython")
    assert c.requests_sent == 1  # nobody listens: another try a moment later would find the same


# --- rate limit (measured from server-side arrival times) ---------------------------------


def _hammer(server: EutilsServer, threads: int, per_thread: int, **kw: object) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        c = client(server, rate=None, **kw)  # NCBI's default rate; a fresh client per thread
        try:
            for _ in range(per_thread):
                c.esearch("biopython")
        except BaseException as exc:  # reported below
            errors.append(exc)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


def test_rate_limit_3_per_second_across_threads(eutils_server: EutilsServer) -> None:
    _hammer(eutils_server, threads=2, per_thread=2)
    seen = eutils_server.requests()
    assert len(seen) == 4
    assert max_in_window(seen) <= 3
    assert min(gaps(seen)) >= 0.3  # 1/3 s (padded 10%), less scheduling jitter


def test_rate_limit_10_per_second_with_api_key_across_threads(eutils_server: EutilsServer) -> None:
    _hammer(eutils_server, threads=4, per_thread=5, api_key="abc123")
    seen = eutils_server.requests()
    assert len(seen) == 20
    assert all(s.params["api_key"] == "abc123" for s in seen)
    assert max_in_window(seen) <= 10
    assert min(gaps(seen)) >= 0.09
    # and faster than the keyless rate would allow: 20 requests at 3/s take > 6 s
    assert seen[-1].time - seen[0].time < 4.0


# --- efetch, batching, history ------------------------------------------------------------


def test_fetch_batches_of_200_with_post_for_long_lists(eutils_server: EutilsServer) -> None:
    real = list(eutils_server.articles)  # the 11 real records, spread among unknown PMIDs
    unknown = [str(40_000_000 + i) for i in range(439)]
    pmids = unknown[:100] + real[:5] + unknown[100:300] + real[5:] + unknown[300:]
    source = PubMedSource(client(eutils_server, api_key="k3y"))
    citations = source.fetch(pmids)
    assert [c.pmid for c in citations] == real[:5] + real[5:]  # given order, unknown left out
    seen = eutils_server.requests("efetch.fcgi")
    sizes = [len(s.params["id"].split(",")) for s in seen]
    assert sizes == [200, 200, 50]
    assert [s.method for s in seen] == ["POST", "POST", "GET"]
    assert [p for s in seen for p in s.params["id"].split(",")] == pmids
    for s in seen:  # tool/email/api_key travel in POST bodies too
        assert (s.params["tool"], s.params["email"], s.params["api_key"]) == ("ebm", "dev@example.org", "k3y")
        assert (s.params["db"], s.params["retmode"]) == ("pubmed", "xml")


def test_fetch_keeps_given_order_drops_unknown_and_duplicates(eutils_server: EutilsServer) -> None:
    source = PubMedSource(client(eutils_server))
    citations = source.fetch(["20000000", "9997", "99999999", "17284678", "9997", "12091962"])
    assert [(c.pmid, c.title) for c in citations] == [
        (p, REAL[p]) for p in ("20000000", "9997", "17284678", "12091962")
    ]
    assert all(c.source == "pubmed" for c in citations)
    (seen,) = eutils_server.requests()
    assert seen.method == "GET" and seen.params["id"] == "20000000,9997,99999999,17284678,12091962"


def test_ids_may_come_as_one_comma_separated_string(eutils_server: EutilsServer) -> None:
    citations = PubMedSource(client(eutils_server)).fetch("9997, 12091962")
    assert [c.title for c in citations] == [REAL["9997"], REAL["12091962"]]
    (seen,) = eutils_server.requests()
    assert seen.params["id"] == "9997,12091962"


def test_efetch_text_rettype(eutils_server: EutilsServer) -> None:
    body = client(eutils_server).efetch(["20000000"], rettype="medline", retmode="text")
    assert body.lstrip().startswith(b"PMID- 20000000\nOWN - NLM\n")
    (seen,) = eutils_server.requests()
    assert (seen.params["rettype"], seen.params["retmode"]) == ("medline", "text")


def test_history_server_paging(eutils_server: EutilsServer) -> None:
    history = list(eutils_server.articles)
    eutils_server.histories[CANCER_WEBENV] = history
    source = PubMedSource(client(eutils_server), batch_size=3)
    search, citations = source.search_and_fetch("cancer", limit=7, sort="date")
    assert search.count == 15169 and search.translation.startswith('("neoplasms"[MeSH Terms]')
    assert [c.pmid for c in citations] == history[:7]
    esearch, *efetches = eutils_server.requests()
    assert esearch.params["usehistory"] == "y" and esearch.params["sort"] == "pub_date"
    assert [(s.params["retstart"], s.params["retmax"]) for s in efetches] == [
        ("0", "3"),
        ("3", "3"),
        ("6", "1"),
    ]
    for s in efetches:
        assert (s.params["WebEnv"], s.params["query_key"]) == (CANCER_WEBENV, "1") and "id" not in s.params


def test_source_search(eutils_server: EutilsServer) -> None:
    result = PubMedSource(client(eutils_server)).search("biopython", limit=20)
    assert (result.query, result.count, len(result.pmids)) == ("biopython", 63, 20)
    assert result.pmids[0] == "41282813" and result.translation == '"biopython"[All Fields]'
    (seen,) = eutils_server.requests()
    assert (seen.params["retmax"], seen.params["sort"]) == ("20", "relevance")


# --- configuration, cache, validation -----------------------------------------------------


def test_environment_configures_url_key_and_email(
    eutils_server: EutilsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EBM_EUTILS_URL", eutils_server.url.rstrip("/"))
    monkeypatch.setenv("NCBI_API_KEY", "env-key")
    monkeypatch.setenv("NCBI_EMAIL", "someone@example.org")
    c = EUtils()
    assert c.base_url == eutils_server.url
    c.esearch("biopython")
    (seen,) = eutils_server.requests()
    assert (seen.params["tool"], seen.params["email"], seen.params["api_key"]) == (
        "ebm", "someone@example.org", "env-key",
    )  # fmt: skip
    assert c.limiter.rate == 10.0  # NCBI's keyed rate


def test_default_url_is_ncbi_and_the_guard_stops_it() -> None:
    c = EUtils(max_tries=1, cache=False)
    assert c.base_url == DEFAULT_BASE_URL == "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
    assert c.limiter.rate == 3.0
    before = len(netguard.attempts)
    with pytest.raises(netguard.NetworkBlocked):  # the client does not swallow the guard
        c.esearch("biopython")
    assert netguard.attempts[before:] == ["socket.getaddrinfo 'eutils.ncbi.nlm.nih.gov'"]
    del netguard.attempts[before:]  # expected here; keep the loopback check for the rest


def test_cache_serves_repeats_but_never_history_requests(eutils_server: EutilsServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    first = client(eutils_server, cache=cache, api_key="one").esearch("biopython")
    again = client(eutils_server, cache=cache, api_key="two").esearch("biopython")  # key not in the cache key
    assert first == again and len(eutils_server.requests()) == 1
    assert len(list((tmp_path / "cache").rglob("*"))) == 2  # one shard directory, one response
    client(eutils_server, cache=cache).esearch("cancer", usehistory=True)
    client(eutils_server, cache=cache).esearch("cancer", usehistory=True)
    assert len(eutils_server.requests()) == 3  # WebEnv sessions expire: not cached


def test_cache_from_environment(
    eutils_server: EutilsServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("EBM_EUTILS_CACHE", str(tmp_path / "c"))
    c = EUtils(eutils_server.url, rate=1000)
    assert c.cache is not None and c.cache.directory == tmp_path / "c"
    c.efetch(["9997"])
    c.efetch(["9997"])
    assert len(eutils_server.requests()) == 1 and c.requests_sent == 1
    monkeypatch.setenv("EBM_EUTILS_CACHE", "on")  # the per-user data directory (EBM_HOME in tests)
    assert EUtils(eutils_server.url).cache.directory == Path(os.environ["EBM_HOME"]) / "eutils-cache"
    assert (
        EUtils(eutils_server.url, cache=True).cache.directory == Path(os.environ["EBM_HOME"]) / "eutils-cache"
    )
    assert EUtils(eutils_server.url, cache=False).cache is None


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda c: c.efetch(["9997", "PMC123"]), "not a PMID: 'PMC123'"),
        (lambda c: c.efetch([str(i) for i in range(201)]), "at most 200 ids"),
        (lambda c: c.esearch("x", mindate="2001"), "needs both mindate and maxdate"),
        (lambda c: c.esearch("x", mindate="01/2001", maxdate="2002"), "mindate must be YYYY"),
        (lambda c: c.esearch("x", sort="newest"), "unknown esearch sort 'newest'"),
        (lambda c: c.esearch("x", datetype="xdat"), "unknown datetype 'xdat'"),
        (lambda c: c.esearch("x", retstart=9_990, retmax=20), "first 10,000 PMIDs"),
        (lambda c: c.esearch("  "), "non-empty search term"),
        (lambda c: PubMedSource(c).search("x", sort="newest"), "unknown sort 'newest'"),
        (lambda c: PubMedSource(c).fetch([*map(str, range(1, 300)), "12x"]), "not a PMID: '12x'"),
        (lambda c: PubMedSource(c).search("x", limit=10_001), "limit must be 0..10,000"),
    ],
)
def test_bad_requests_are_input_errors_and_send_nothing(eutils_server: EutilsServer, call, message) -> None:
    c = client(eutils_server)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call(c)
    assert eutils_server.requests() == [] and c.requests_sent == 0
