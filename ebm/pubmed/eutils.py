"""NCBI E-utilities client: esearch and efetch for PubMed, polite and robust.

Conventions follow ``Bio.Entrez`` (parameter names, ``tool``/``email``/``api_key`` sent
with every request, IDs joined by commas, POST instead of GET for long requests), but
the HTTP layer is our own, because ``Bio.Entrez._open``:

- has no request timeout (a stalled NCBI response hangs the caller forever);
- has no base-URL setting (every function hard-codes eutils.ncbi.nlm.nih.gov, so it can
  be pointed neither at a mirror nor at a local test server);
- keeps its rate limit in an unlocked module global (threads can burst past it) and takes
  ``tool``/``email``/``api_key`` from module globals shared by every caller;
- sleeps a fixed 15 s between tries, without exponential backoff or ``Retry-After``.

The esearch XML is parsed with lxml rather than ``Bio.Entrez.read``: the latter rejects
real NCBI responses that declare the older ``http://`` eSearch_020511 DTD ("Expected
secure URL to NCBI"), even with ``validate=False``.

Every response is checked before it is returned or cached: XML must parse to the end
(a truncated body is retried), and an NCBI ``<ERROR>`` body becomes a ``ServiceError``
naming the utility and NCBI's message.
"""

from __future__ import annotations

import email.message
import email.utils
import http.client
import logging
import os
import re
import socket
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode, urlsplit
from urllib.request import HTTPHandler, HTTPSHandler, OpenerDirector, Request, build_opener

from lxml import etree

from ebm import __version__
from ebm.errors import InputError, ServiceError
from ebm.pubmed.cache import ResponseCache, cache_from_env, default_cache_dir
from ebm.pubmed.ratelimit import RateLimiter, shared_limiter
from ebm.source import DeadlineExceeded, SourceUnavailable, current_deadline

log = logging.getLogger("ebm.pubmed")

DEFAULT_BASE_URL = "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/"
ENV_BASE_URL = "EBM_EUTILS_URL"
ENV_API_KEY = "NCBI_API_KEY"
ENV_EMAIL = "NCBI_EMAIL"
DEFAULT_TOOL = "ebm"

MAX_IDS_PER_REQUEST = 200  # NCBI: "up to about 200 UIDs" per GET/efetch batch
ESEARCH_MAX_RECORDS = 10_000  # PubMed esearch returns only the first 10,000 PMIDs of a result
# Bio.Entrez switches to POST above 1,000 characters of parameters or from 200 IDs on.
POST_OVER_CHARS = 1000
POST_FROM_IDS = 200

SORTS = frozenset({"relevance", "pub_date", "Author", "JournalName"})
DATETYPES = frozenset({"pdat", "edat", "mdat", "crdt"})
_DATE = re.compile(r"^\d{4}(/\d{1,2}(/\d{1,2})?)?$")
_PMID = re.compile(r"^\d+$")
# NCBI answers some backend hiccups with HTTP 200 and an <ERROR> body; these are worth a retry.
_TRANSIENT_NCBI_ERROR = re.compile(
    r"search backend failed|unable to open connection|temporarily unavailable|timed? ?out", re.I
)

# Never fetch a DTD or resolve an external entity: parsing must not touch the network.
_PARSER_OPTIONS = dict(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True)


@dataclass(frozen=True)
class ESearchResult:
    count: int
    retmax: int
    retstart: int
    ids: tuple[str, ...]
    query_translation: str | None = None
    webenv: str | None = None
    query_key: str | None = None
    translations: tuple[tuple[str, str], ...] = ()  # (from, to) pairs of the TranslationSet
    errors: tuple[str, ...] = ()  # ErrorList entries, e.g. "PhraseNotFound: fleegle[MeSH Terms]"
    warnings: tuple[str, ...] = ()  # WarningList entries, e.g. "OutputMessage: No items found."


class _Retryable(Exception):
    """A failure worth another try (HTTP 429/5xx, connection trouble, truncated body)."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _Unreachable(Exception):
    """Nobody answers at the server's address (connection refused, no route, unknown host):
    another try a second later finds the same, so the request fails at once."""


class _OutOfTime(Exception):
    """The request's (or the question's) deadline passed while a try was under way."""


class _Watch:
    """Shuts a try's socket down when its deadline passes, wherever the try is blocked
    (connecting, the headers, the body): a per-read timeout alone never ends a server that
    sends one byte every few seconds."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self.fired = False

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            self._sock = sock
            if self.fired:
                self._shutdown()

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            self._shutdown()

    def _shutdown(self) -> None:
        if self._sock is not None:
            try:  # the plain socket's shutdown, also under TLS: wakes a blocked recv with EOF
                socket.socket.shutdown(self._sock, socket.SHUT_RDWR)
            except OSError:
                pass


def _watched(base: type[http.client.HTTPConnection], watch: _Watch) -> type[http.client.HTTPConnection]:
    class Watched(base):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            watch.attach(self.sock)

    return Watched


class _WatchedHTTP(HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self._watch = watch

    def http_open(self, req: Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self._watch), req)


class _WatchedHTTPS(HTTPSHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self._watch = watch

    def https_open(self, req: Request) -> http.client.HTTPResponse:
        return self.do_open(
            _watched(http.client.HTTPSConnection, self._watch),
            req,
            context=self._context,  # type: ignore[attr-defined]
        )


class EUtils:
    """A client for one E-utilities server; safe to share between threads.

    ``None`` arguments fall back to the environment: ``EBM_EUTILS_URL`` (base URL),
    ``NCBI_API_KEY``, ``NCBI_EMAIL`` and ``EBM_EUTILS_CACHE`` (see ``ebm.pubmed.cache``).
    ``rate`` overrides NCBI's limit (3 requests/s, 10 with a key) and is shared with every
    other client of the same server and key in the process. A request is tried at most
    ``max_tries`` times; try *n* waits ``backoff * 2**(n-1)`` seconds (at most
    ``max_backoff``) or longer if the server sends ``Retry-After``. ``timeout`` bounds
    connecting and each read; ``deadline`` bounds a whole request, its retries and pauses
    included (and a question's deadline, ``ebm.source.deadline``, bounds it further).
    """

    def __init__(
        self,
        base_url: str | None = None,
        *,
        tool: str = DEFAULT_TOOL,
        email: str | None = None,
        api_key: str | None = None,
        timeout: float = 30.0,
        deadline: float = 60.0,
        max_tries: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        rate: float | None = None,
        cache: ResponseCache | bool | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        base = base_url or os.environ.get(ENV_BASE_URL) or DEFAULT_BASE_URL
        self.base_url = base if base.endswith("/") else base + "/"
        parts = urlsplit(self.base_url)
        if parts.scheme not in {"http", "https"} or not parts.netloc:
            raise InputError(f"E-utilities base URL must be http(s)://host/...: {self.base_url!r}")
        self.tool = tool
        self.email = email if email is not None else (os.environ.get(ENV_EMAIL) or None)
        self.api_key = (api_key if api_key is not None else os.environ.get(ENV_API_KEY)) or None
        if max_tries < 1:
            raise ValueError("max_tries must be >= 1")
        if not (timeout > 0 and deadline > 0):
            raise InputError(f"timeout and deadline must be > 0 s (got {timeout}, {deadline})")
        self.timeout = timeout
        self.deadline = deadline
        self.max_tries = max_tries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        server = f"{parts.scheme}://{parts.netloc}"
        self.limiter = limiter or shared_limiter(server, self.api_key, rate)
        # None: as EBM_EUTILS_CACHE says; True: the default directory; False: off.
        if cache is None:
            self.cache = cache_from_env()
        elif cache is True:
            self.cache = ResponseCache(default_cache_dir())
        else:
            self.cache = cache or None
        self._user_agent = f"{tool}/{__version__} (ebm E-utilities client)"
        self._count_lock = threading.Lock()
        self.requests_sent = 0  # HTTP requests actually sent (cache hits excluded)

    # --- esearch -------------------------------------------------------------------------

    def esearch(
        self,
        term: str,
        *,
        db: str = "pubmed",
        retmax: int = 20,
        retstart: int = 0,
        sort: str | None = None,
        mindate: str | None = None,
        maxdate: str | None = None,
        datetype: str | None = None,
        usehistory: bool = False,
        field: str | None = None,
    ) -> ESearchResult:
        """Run one esearch; ``usehistory`` keeps the result on NCBI's history server."""
        if not term or not term.strip():
            raise InputError("esearch needs a non-empty search term")
        if retmax < 0 or retstart < 0:
            raise InputError(f"retmax and retstart must be >= 0 (got {retmax}, {retstart})")
        if db == "pubmed" and retstart + retmax > ESEARCH_MAX_RECORDS:
            raise InputError(
                f"PubMed esearch returns only the first {ESEARCH_MAX_RECORDS:,} PMIDs of a result; "
                f"retstart {retstart} + retmax {retmax} goes past it (narrow the query)"
            )
        if sort is not None and sort not in SORTS:
            raise InputError(f"unknown esearch sort {sort!r} (one of {', '.join(sorted(SORTS))})")
        for name, value in (("mindate", mindate), ("maxdate", maxdate)):
            if value is not None and not _DATE.match(value):
                raise InputError(f"{name} must be YYYY, YYYY/MM or YYYY/MM/DD, got {value!r}")
        if (mindate is None) != (maxdate is None):
            raise InputError("a date range needs both mindate and maxdate (NCBI ignores one alone)")
        if datetype is not None and datetype not in DATETYPES:
            raise InputError(f"unknown datetype {datetype!r} (one of {', '.join(sorted(DATETYPES))})")
        params = {
            "db": db,
            "term": term,
            "retmax": retmax,
            "retstart": retstart,
            "sort": sort,
            "mindate": mindate,
            "maxdate": maxdate,
            "datetype": datetype,
            "field": field,
            "usehistory": "y" if usehistory else None,
        }
        shown = term if len(term) <= 200 else term[:200] + "..."
        body = self.request("esearch.fcgi", params, what=f"esearch term={shown!r}", root="eSearchResult")
        return parse_esearch(body)

    # --- efetch --------------------------------------------------------------------------

    def efetch(
        self,
        ids: Sequence[str] | str | None = None,
        *,
        db: str = "pubmed",
        rettype: str | None = None,
        retmode: str = "xml",
        webenv: str | None = None,
        query_key: str | None = None,
        retstart: int | None = None,
        retmax: int | None = None,
    ) -> bytes:
        """One efetch request: by ``ids`` (at most 200) or from a history-server ``webenv``."""
        if ids is not None:
            ids = pmid_list(ids)
            if not ids:
                raise InputError("efetch needs at least one id")
            if len(ids) > MAX_IDS_PER_REQUEST:
                raise InputError(f"efetch takes at most {MAX_IDS_PER_REQUEST} ids per request; use fetch_ids")
        elif webenv is None or query_key is None:
            raise InputError("efetch needs ids, or webenv and query_key")
        params = {
            "db": db,
            "id": ",".join(ids) if ids is not None else None,
            "WebEnv": webenv if ids is None else None,
            "query_key": query_key if ids is None else None,
            "retstart": retstart,
            "retmax": retmax,
            "rettype": rettype,
            "retmode": retmode,
        }
        if ids is not None:
            what = f"efetch of {len(ids)} id(s) from {ids[0]}"
        else:
            what = f"efetch from history (query_key {query_key}, retstart {retstart}, retmax {retmax})"
        root = "PubmedArticleSet" if db == "pubmed" and retmode == "xml" else None
        return self.request("efetch.fcgi", params, what=what, root=root, xml=retmode == "xml")

    def fetch_ids(
        self,
        ids: Iterable[str],
        *,
        batch_size: int = MAX_IDS_PER_REQUEST,
        db: str = "pubmed",
        rettype: str | None = None,
        retmode: str = "xml",
    ) -> Iterator[bytes]:
        """efetch any number of IDs, ``batch_size`` (<= 200) per request; yields each response."""
        if not 1 <= batch_size <= MAX_IDS_PER_REQUEST:
            raise InputError(f"batch_size must be 1..{MAX_IDS_PER_REQUEST}, got {batch_size}")
        batch: list[str] = []
        for pmid in pmid_list(ids):  # all checked before anything is sent
            batch.append(pmid)
            if len(batch) == batch_size:
                yield self.efetch(batch, db=db, rettype=rettype, retmode=retmode)
                batch = []
        if batch:
            yield self.efetch(batch, db=db, rettype=rettype, retmode=retmode)

    def fetch_history(
        self,
        webenv: str,
        query_key: str,
        count: int,
        *,
        start: int = 0,
        batch_size: int = MAX_IDS_PER_REQUEST,
        **kw: str,
    ) -> Iterator[bytes]:
        """efetch records ``start .. count-1`` of a history-server result, paging by retstart/retmax."""
        if not 1 <= batch_size <= MAX_IDS_PER_REQUEST:
            raise InputError(f"batch_size must be 1..{MAX_IDS_PER_REQUEST}, got {batch_size}")
        for retstart in range(start, count, batch_size):
            retmax = min(batch_size, count - retstart)
            yield self.efetch(webenv=webenv, query_key=query_key, retstart=retstart, retmax=retmax, **kw)

    # --- transport -----------------------------------------------------------------------

    def params(self, params: Mapping[str, object]) -> dict[str, str]:
        """Request parameters as sent: ``None`` dropped, then ``tool``, ``email``, ``api_key``."""
        out = {k: str(v) for k, v in params.items() if v is not None}
        out.setdefault("tool", self.tool)
        if self.email:
            out.setdefault("email", self.email)
        if self.api_key:
            out.setdefault("api_key", self.api_key)
        return out

    def request(
        self,
        utility: str,
        params: Mapping[str, object],
        *,
        what: str | None = None,
        root: str | None = None,
        xml: bool = True,
        post: bool | None = None,
    ) -> bytes:
        """GET or POST ``utility`` with retries; returns the checked response body.

        ``root`` is the expected XML root element (another root, e.g. an HTML error page,
        counts as a failed try). Raises ``ServiceError`` naming ``what`` and the URL.
        """
        url = self.base_url + utility
        what = what or utility
        sent = self.params(params)
        encoded = urlencode(sent)
        if post is None:
            n_ids = sent["id"].count(",") + 1 if "id" in sent else 0
            post = len(encoded) > POST_OVER_CHARS or n_ids >= POST_FROM_IDS
        if self.cache is not None:
            cached = self.cache.get(url, sent)
            if cached is not None:
                return cached
        # The request's own deadline, or the question's when that passes first.
        end, binding = time.monotonic() + self.deadline, f"the request's deadline of {self.deadline:g} s"
        out_of_time: type[SourceUnavailable] = SourceUnavailable
        question = current_deadline()
        if question is not None and question.end < end:
            end, binding = question.end, f"the question's deadline of {question.seconds:g} s"
            out_of_time = DeadlineExceeded
        last = "no attempt"

        def expired(attempt: int) -> SourceUnavailable:
            return out_of_time(
                f"{what} failed at {url}: no complete answer within {binding} "
                f"({attempt} tr{'y' if attempt == 1 else 'ies'}; last failure: {last})"
            )

        for attempt in range(1, self.max_tries + 1):
            self.limiter.acquire()
            retry_after: float | None = None
            try:
                if end - time.monotonic() <= 0:
                    raise _OutOfTime
                body = self._send(url, encoded, post, end)
                if xml:
                    _check_xml(body, root)
            except _Retryable as exc:
                last, retry_after = self._redact(str(exc)), exc.retry_after
            except _OutOfTime:
                raise expired(attempt) from None
            except _Unreachable as exc:
                raise SourceUnavailable(f"{what} failed at {url}: {self._redact(str(exc))}") from None
            except _NcbiError as exc:
                raise ServiceError(f"{what} failed at {url}: {self._redact(str(exc))}") from None
            else:
                if self.cache is not None:
                    self.cache.put(url, sent, body)
                return body
            if attempt == self.max_tries:
                break
            delay = min(self.backoff * 2 ** (attempt - 1), self.max_backoff)
            if retry_after is not None:
                if retry_after > self.max_retry_after:
                    raise ServiceError(
                        f"{what} failed at {url}: server asks to retry after {retry_after:.0f} s "
                        f"(more than {self.max_retry_after:.0f} s); last failure: {last}"
                    )
                delay = max(delay, retry_after)
            if time.monotonic() + delay >= end:  # the pause alone would pass the deadline
                raise expired(attempt)
            log.warning(
                "%s: try %d/%d failed (%s); retrying in %.2f s", what, attempt, self.max_tries, last, delay
            )
            time.sleep(delay)
        # Retries spent on a failing server: the next query would meet the same server.
        raise SourceUnavailable(f"{what} failed at {url} after {self.max_tries} tries; last failure: {last}")

    def _redact(self, message: str) -> str:
        # NCBI's 429 body echoes the API key ("api-key": ...): keep it out of messages and logs.
        return message.replace(self.api_key, "<api_key>") if self.api_key else message

    def _send(self, url: str, encoded: str, post: bool, end: float) -> bytes:
        """One try; ``end`` (``time.monotonic()``) is when it is abandoned whatever it is doing."""
        headers = {"User-Agent": self._user_agent}
        if post:
            request = Request(url, data=encoded.encode(), method="POST", headers=headers)
        else:
            request = Request(f"{url}?{encoded}", method="GET", headers=headers)
        with self._count_lock:
            self.requests_sent += 1
        watch = _Watch()
        opener: OpenerDirector = build_opener(_WatchedHTTP(watch), _WatchedHTTPS(watch))
        left = end - time.monotonic()
        timer = threading.Timer(max(left, 0.0), watch.fire)
        timer.daemon = True
        timer.start()
        try:
            with opener.open(request, timeout=max(min(self.timeout, left), 0.001)) as response:
                body: bytes = response.read()
        except HTTPError as exc:
            status = exc.code
            detail = "" if watch.fired else _error_detail(exc)
            if status == 429 or 500 <= status < 600:
                raise _Retryable(f"HTTP {status} {exc.reason}{detail}", _retry_after(exc.headers)) from None
            raise _NcbiError(f"HTTP {status} {exc.reason}{detail}") from None
        except TimeoutError:
            if watch.fired or time.monotonic() >= end:
                raise _OutOfTime from None
            raise _Retryable(f"no response within {self.timeout:g} s (timeout)") from None
        except URLError as exc:
            reason = exc.reason
            if watch.fired or time.monotonic() >= end:
                raise _OutOfTime from None
            if isinstance(reason, TimeoutError):
                raise _Retryable(f"no response within {self.timeout:g} s (timeout)") from None
            if isinstance(reason, ConnectionRefusedError | socket.gaierror) or (
                isinstance(reason, OSError) and reason.errno in _UNREACHABLE
            ):
                raise _Unreachable(f"cannot connect: {reason}") from None
            raise _Retryable(f"connection failed: {reason}") from None
        except (http.client.HTTPException, OSError) as exc:
            if watch.fired:
                raise _OutOfTime from None
            # IncompleteRead (body shorter than Content-Length), RemoteDisconnected, resets.
            raise _Retryable(f"connection broken: {type(exc).__name__}: {exc}") from None
        finally:
            timer.cancel()
        if watch.fired:  # the body ended because the deadline shut the socket
            raise _OutOfTime
        return body


# errno values meaning nothing can be reached at that address (no route, network down).
_UNREACHABLE = frozenset({101, 113})  # ENETUNREACH, EHOSTUNREACH


class _NcbiError(Exception):
    """A definitive failure: an NCBI <ERROR> body or an HTTP 4xx other than 429."""


def pmid_list(ids: Iterable[object] | str) -> list[str]:
    """PMIDs as strings, checked; like Bio.Entrez, one string may hold several, comma-separated."""
    items = ids.split(",") if isinstance(ids, str) else ids
    out = []
    for pmid in items:
        text = str(pmid).strip()
        if not _PMID.match(text):
            raise InputError(f"not a PMID: {pmid!r}")
        out.append(text)
    return out


def _error_detail(exc: HTTPError) -> str:
    try:
        body = exc.read()[:300].decode("utf-8", "replace").strip()
    except Exception:  # the body of an error response is a courtesy, not a requirement
        body = ""
    return f": {' '.join(body.split())}" if body else ""


def _retry_after(headers: Mapping[str, str] | email.message.Message | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds (fractions accepted) or an HTTP date."""
    value = (headers or {}).get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _parse_xml(body: bytes) -> etree._Element:
    parser = etree.XMLParser(**_PARSER_OPTIONS)
    return etree.fromstring(body, parser)


def _check_xml(body: bytes, root_tag: str | None) -> None:
    """Raise ``_Retryable`` for truncated/foreign bodies, ``_NcbiError`` for NCBI <ERROR> bodies."""
    try:
        root = _parse_xml(body)
    except etree.XMLSyntaxError as exc:
        where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "start"
        raise _Retryable(f"truncated or malformed XML ({len(body)} bytes; {exc.msg} at {where})") from None
    error = root if root.tag == "ERROR" else root.find("ERROR")
    if error is not None:
        message = " ".join("".join(error.itertext()).split()) or "(empty <ERROR>)"
        if _TRANSIENT_NCBI_ERROR.search(message):
            raise _Retryable(f"NCBI error: {message}")
        raise _NcbiError(f"NCBI error: {message}")
    if root_tag is not None and root.tag != root_tag:
        raise _Retryable(f"unexpected response: <{root.tag}> where <{root_tag}> was expected")


def parse_esearch(body: bytes) -> ESearchResult:
    """An ``eSearchResult`` document as an ``ESearchResult``."""
    root = _parse_xml(body)

    def text(tag: str) -> str | None:
        el = root.find(tag)
        return None if el is None or el.text is None else el.text.strip()

    def entries(tag: str) -> tuple[str, ...]:
        holder = root.find(tag)
        if holder is None:
            return ()
        return tuple(f"{el.tag}: {(el.text or '').strip()}" for el in holder if (el.text or "").strip())

    translations = tuple(
        ((t.findtext("From") or "").strip(), (t.findtext("To") or "").strip())
        for t in root.iterfind("TranslationSet/Translation")
    )
    return ESearchResult(
        count=int(text("Count") or 0),
        retmax=int(text("RetMax") or 0),
        retstart=int(text("RetStart") or 0),
        ids=tuple(el.text.strip() for el in root.iterfind("IdList/Id") if el.text),
        query_translation=text("QueryTranslation"),
        webenv=text("WebEnv"),
        query_key=text("QueryKey"),
        translations=translations,
        errors=entries("ErrorList"),
        warnings=entries("WarningList"),
    )
