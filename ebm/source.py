"""The one narrow interface behind which citations come from: the local store or PubMed.

``ebm.store`` (local SQLite MEDLINE store) and ``ebm.pubmed`` (E-utilities) both implement
``CitationSource``, so query formulation, ``ebm ask`` and tests can swap one for the other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from ebm.citation import Citation

Sort = Literal["relevance", "date"]


@dataclass(frozen=True)
class SearchResult:
    query: str  # the query as given
    count: int  # total hits (may exceed len(pmids))
    pmids: tuple[str, ...]  # in result order, at most the requested limit
    translation: str | None = None  # how the source understood the query, when it says
    # The source's relevance score of each PMID (same order), when it computes one (the local
    # store's BM25; None for a hit matched without text terms); None when it gives no scores.
    scores: tuple[float | None, ...] | None = None


class CitationSource(Protocol):
    name: str  # "local" or "pubmed"

    def search(self, query: str, limit: int = 50, sort: Sort = "relevance") -> SearchResult:
        """Run a PubMed-syntax query; unsupported syntax raises ``InputError`` naming the part."""
        ...

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        """Citations for ``pmids`` in the given order; unknown PMIDs are left out."""
        ...
