"""A local E-utilities server for tests: replays real NCBI responses and injects faults.

It listens on 127.0.0.1 (port 0) in a thread and answers like eutils.ncbi.nlm.nih.gov:

- ``esearch.fcgi`` replays the real esearch responses in ``../shared/data/eutils`` by
  search term (``ESEARCH_REPLAYS``), ``db=fleegle`` gets NCBI's real ``<ERROR>`` body;
- ``efetch.fcgi`` answers by ``id`` (GET or POST) with the real ``PubmedArticle`` records
  of the shared efetch files (unknown PMIDs left out, as NCBI does), by ``WebEnv`` +
  ``query_key`` with ``retstart``/``retmax`` pages of a history, and ``rettype=medline`` /
  ``abstract`` as text from ``one-pmid-all-formats``.

Every request is logged (arrival time, method, parameters) before any fault is applied,
so tests can count retries and measure pauses from the server's side. Faults queued with
``inject`` hit the next matching requests: an HTTP status (with ``Retry-After``), a stall
past the client's timeout, a body cut short (well-formed HTTP, truncated XML), a
connection closed before ``Content-Length`` bytes, a replacement body (an NCBI
``<ERROR>``), a TCP reset, or a trickle (the whole response, status line included, one
byte every ``seconds``: each read gets something, so only a total deadline ends it).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from lxml import etree

from tests import netguard

BASE_PATH = "/entrez/eutils/"

# term -> real esearch response (db=pubmed).
ESEARCH_REPLAYS = {
    "cancer": "ncbi-samples/esearch.pubmed.xml",  # with WebEnv/QueryKey, Count 15169
    "biopython": "biopython/esearch1.xml",
    "stem cells AND hasabstract": "biopython/esearch5.xml",
    "PNAS[ta] AND 97[vi]": "biopython/esearch3.xml",
    "abcXYZ": "biopython/esearch8.xml",  # no hits, PhraseNotFound + OutputMessage
    "obstetrics[mh] OR fleegle[mh]": "ncbi-samples/esearch.error.xml",  # ErrorList PhraseNotFound
}
BAD_DB_REPLAY = "ncbi-samples/esearch.baderror.xml"  # <ERROR>Invalid db name specified: fleegle</ERROR>
# Files holding real PubmedArticle records; the first occurrence of a PMID wins, so the
# contrived NCBI example file comes last (it only adds the book record 20301295).
EFETCH_FILES = [
    "ncbi-samples/efetch.pubmed.xml",
    "biopython/pubmed1.xml",
    "biopython/pubmed2.xml",
    "biopython/pubmed4.xml",
    "biopython/pubmed5.xml",
    "biopython/pubmed6.xml",
    "biopython/pubmed7.xml",
    "one-pmid-all-formats/20000000.xml",
    "ncbi-samples/efetch.pubmedexample.xml",
]
TEXT_FORMATS = {
    "medline": "one-pmid-all-formats/{pmid}.medline",
    "abstract": "one-pmid-all-formats/{pmid}.abstract",
}
EFETCH_HEADER = (
    b'<?xml version="1.0" ?>\n'
    b'<!DOCTYPE PubmedArticleSet PUBLIC "-//NLM//DTD PubMedArticle, 1st January 2025//EN" '
    b'"https://dtd.nlm.nih.gov/ncbi/pubmed/out/pubmed_250101.dtd">\n'
)
# The body NCBI sends with a 429 (JSON whatever retmode was asked for); it echoes the API
# key, or the client's IP address when there is none.
RATE_LIMIT_BODY = '{{"error":"API rate limit exceeded","api-key":"{key}","count":"4","limit":"3"}}\n'


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    time: float  # time.monotonic() on arrival
    method: str
    utility: str
    params: dict[str, str]
    fault: str | None  # the fault applied, if any


@dataclass
class Fault:
    kind: str  # status | stall | truncate | short | body | reset | trickle
    status: int = 500
    retry_after: str | None = None
    seconds: float = 0.0
    body: bytes | None = None
    utility: str | None = None  # only requests to this utility (e.g. "efetch.fcgi")


@dataclass
class EutilsServer:
    data: Path  # ../shared/data/eutils
    seen: list[Seen] = field(default_factory=list)
    histories: dict[str, list[str]] = field(default_factory=dict)  # WebEnv -> PMIDs in result order
    articles: dict[str, bytes] = field(default_factory=dict)  # PMID -> <PubmedArticle> XML
    _faults: list[Fault] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None

    def __post_init__(self) -> None:
        parser = etree.XMLParser(load_dtd=False, no_network=True, resolve_entities=False)
        for name in EFETCH_FILES:
            root = etree.parse(str(self.data / name), parser).getroot()
            for record in root:
                if not isinstance(record.tag, str):
                    continue  # comments
                pmid = record.findtext("MedlineCitation/PMID") or record.findtext("BookDocument/PMID")
                if pmid and pmid not in self.articles:
                    self.articles[pmid] = etree.tostring(record, encoding="utf-8", with_tail=False)

    # --- control -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}{BASE_PATH}"

    def start(self) -> None:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.02},
            name="eutils-server",
            daemon=True,
        ).start()

    def stop(self) -> None:
        self._stop.set()  # wake stalled handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def requests(self, utility: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if utility is None or s.utility == utility]

    # --- used by the handler -------------------------------------------------------------

    def _arrive(self, method: str, utility: str, params: dict[str, str]) -> Fault | None:
        arrived = time.monotonic()
        with self._lock:
            fault = next((f for f in self._faults if f.utility in (None, utility)), None)
            if fault is not None:
                self._faults.remove(fault)
            self.seen.append(Seen(arrived, method, utility, params, fault.kind if fault else None))
        return fault

    def answer(self, utility: str, params: dict[str, str]) -> tuple[int, str, bytes]:
        """(status, content type, body) of the normal, fault-free response."""
        if utility == "esearch.fcgi":
            return self._esearch(params)
        if utility == "efetch.fcgi":
            return self._efetch(params)
        return 404, "text/plain", f"no such utility: {utility}\n".encode()

    def _esearch(self, params: dict[str, str]) -> tuple[int, str, bytes]:
        if params.get("db", "pubmed") != "pubmed":
            return 200, "text/xml", (self.data / BAD_DB_REPLAY).read_bytes()
        replay = ESEARCH_REPLAYS.get(params.get("term", ""))
        if replay is None:
            return 400, "text/plain", f"no recorded esearch response for {params.get('term')!r}\n".encode()
        return 200, "text/xml", (self.data / replay).read_bytes()

    def _efetch(self, params: dict[str, str]) -> tuple[int, str, bytes]:
        rettype, retmode = params.get("rettype"), params.get("retmode", "xml")
        if "id" in params:
            pmids = [p.strip() for p in params["id"].split(",") if p.strip()]
        elif "WebEnv" in params:
            history = self.histories.get(params["WebEnv"])
            if history is None or params.get("query_key") != "1":
                return (
                    200,
                    "text/xml",
                    b"<eFetchResult><ERROR>Unable to obtain query #1</ERROR></eFetchResult>",
                )
            start = int(params.get("retstart", 0))
            pmids = history[start : start + int(params.get("retmax", 20))]
        else:
            return 400, "text/plain", b"efetch needs id or WebEnv\n"
        if retmode == "text" and rettype in TEXT_FORMATS:
            parts = [self.data / TEXT_FORMATS[rettype].format(pmid=p) for p in pmids]
            return 200, "text/plain", b"\n".join(p.read_bytes() for p in parts if p.exists())
        records = [self.articles[p] for p in pmids if p in self.articles]
        body = EFETCH_HEADER + b"<PubmedArticleSet>\n" + b"\n".join(records) + b"\n</PubmedArticleSet>\n"
        return 200, "text/xml", body


class _Handler(BaseHTTPRequestHandler):
    owner: EutilsServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - base-class name
        pass  # keep pytest output clean

    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        parts = urlsplit(self.path)
        self._serve("GET", parts.path, parts.query)

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        length = int(self.headers.get("Content-Length") or 0)
        query = self.rfile.read(length).decode()
        self._serve("POST", urlsplit(self.path).path, query)

    def _serve(self, method: str, path: str, query: str) -> None:
        utility = path[len(BASE_PATH) :] if path.startswith(BASE_PATH) else path
        params = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
        fault = self.owner._arrive(method, utility, params)
        self.close_connection = True
        if fault is not None and fault.kind == "reset":
            # SO_LINGER 0: close() sends RST, the client sees "connection reset by peer".
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            return
        if fault is not None and fault.kind == "status":
            if fault.status == 429:
                body = RATE_LIMIT_BODY.format(key=params.get("api_key", self.client_address[0])).encode()
            else:
                body = f"<html>{fault.status} error</html>".encode()
            headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
            self._send(
                fault.status, "application/json" if fault.status == 429 else "text/html", body, headers
            )
            return
        if fault is not None and fault.kind == "stall":
            if self.owner._stop.wait(fault.seconds):
                return
        status, ctype, body = self.owner.answer(utility, params)
        if fault is not None and fault.kind == "trickle":
            self._trickle(status, ctype, body, fault.seconds)
            return
        if fault is not None and fault.kind == "body":
            status, ctype, body = 200, "text/xml", fault.body or b""
        if fault is not None and fault.kind == "truncate":
            body = body[: len(body) // 2]
        if fault is not None and fault.kind == "short":
            self._send(status, ctype, body[: len(body) // 2], {}, length=len(body))
            return
        self._send(status, ctype, body, {})

    def _trickle(self, status: int, ctype: str, body: bytes, seconds: float) -> None:
        head = (
            f"HTTP/1.1 {status} OK\r\nContent-Type: {ctype}; charset=UTF-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        try:
            for i in range(len(head) + len(body)):
                self.wfile.write((head + body)[i : i + 1])
                self.wfile.flush()
                if self.owner._stop.wait(seconds):
                    return
        except OSError:
            pass  # the client gave up (its deadline shut the connection)

    def _send(
        self, status: int, ctype: str, body: bytes, headers: dict[str, str], length: int | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", f"{ctype}; charset=UTF-8")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            self.send_header("Connection", "close")
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (e.g. after its timeout)


@pytest.fixture(name="eutils_server")
def eutils_server_fixture(shared: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EutilsServer]:
    """A running replay/fault server; its base URL is ``.url``."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)  # talk to 127.0.0.1 directly
    server = EutilsServer(shared / "eutils")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def clean_eutils_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No NCBI key, e-mail, server or cache setting of the user's leaks into a client."""
    for var in ("NCBI_API_KEY", "NCBI_EMAIL", "EBM_EUTILS_URL", "EBM_EUTILS_CACHE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def nothing_but_loopback() -> Iterator[None]:
    """Whatever a test does, the network guard must not have refused anything."""
    before = len(netguard.attempts)
    yield
    assert netguard.attempts[before:] == []
