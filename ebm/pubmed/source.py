"""``PubMedSource``: the ``CitationSource`` backed by live PubMed (NCBI E-utilities)."""

from __future__ import annotations

from collections.abc import Sequence

from ebm.citation import Citation
from ebm.errors import InputError, ServiceError
from ebm.medline.reader import read_citations
from ebm.pubmed.eutils import ESEARCH_MAX_RECORDS, MAX_IDS_PER_REQUEST, EUtils, pmid_list
from ebm.source import SearchResult, Sort

# CitationSource sort names -> esearch ``sort`` values for PubMed.
_SORTS = {"relevance": "relevance", "date": "pub_date"}


class PubMedSource:
    """Search and fetch PubMed through E-utilities (see ``EUtils`` for configuration)."""

    name = "pubmed"

    def __init__(self, client: EUtils | None = None, *, batch_size: int = MAX_IDS_PER_REQUEST) -> None:
        self.client = client or EUtils()
        self.batch_size = batch_size

    def search(self, query: str, limit: int = 50, sort: Sort = "relevance") -> SearchResult:
        result = self.client.esearch(query, retmax=self._limit(limit), sort=self._sort(sort))
        return SearchResult(
            query=query, count=result.count, pmids=result.ids, translation=result.query_translation
        )

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        wanted = list(dict.fromkeys(pmid_list(pmids)))
        found: dict[str, Citation] = {}
        for body in self.client.fetch_ids(wanted, batch_size=self.batch_size):
            for citation in self._parse(body):
                found.setdefault(citation.pmid, citation)
        return [found[p] for p in wanted if p in found]

    def search_and_fetch(
        self, query: str, limit: int = 50, sort: Sort = "relevance"
    ) -> tuple[SearchResult, list[Citation]]:
        """Search, then fetch the first ``limit`` records from NCBI's history server.

        The result set stays on NCBI's side (WebEnv + query_key) and is paged with
        retstart/retmax, so large result sets never send their PMIDs back and forth.
        """
        limit = self._limit(limit)
        result = self.client.esearch(query, retmax=limit, sort=self._sort(sort), usehistory=True)
        search = SearchResult(
            query=query, count=result.count, pmids=result.ids, translation=result.query_translation
        )
        total = min(limit, result.count)
        if total == 0:
            return search, []
        if result.webenv is None or result.query_key is None:
            raise ServiceError(f"esearch for {query!r} asked for history but returned no WebEnv/QueryKey")
        citations: list[Citation] = []
        for body in self.client.fetch_history(
            result.webenv, result.query_key, total, batch_size=self.batch_size
        ):
            citations.extend(self._parse(body))
        return search, citations

    @staticmethod
    def _limit(limit: int) -> int:
        if not 0 <= limit <= ESEARCH_MAX_RECORDS:
            raise InputError(f"limit must be 0..{ESEARCH_MAX_RECORDS:,} for PubMed, got {limit}")
        return limit

    @staticmethod
    def _sort(sort: str) -> str:
        try:
            return _SORTS[sort]
        except KeyError:
            raise InputError(f"unknown sort {sort!r} (relevance or date)") from None

    @staticmethod
    def _parse(body: bytes) -> list[Citation]:
        try:
            return list(read_citations(body, name="pubmed"))
        except InputError as exc:  # the client already checked the XML; this is NCBI's fault
            raise ServiceError(f"unreadable efetch response from PubMed: {exc}") from exc
