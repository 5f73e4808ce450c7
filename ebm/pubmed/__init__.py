"""PubMed through NCBI E-utilities: the client (``EUtils``) and the ``CitationSource`` (``PubMedSource``)."""

from ebm.pubmed.cache import ResponseCache
from ebm.pubmed.eutils import DEFAULT_BASE_URL, ESearchResult, EUtils, parse_esearch
from ebm.pubmed.ratelimit import RateLimiter, shared_limiter
from ebm.pubmed.source import PubMedSource

__all__ = [
    "DEFAULT_BASE_URL",
    "ESearchResult",
    "EUtils",
    "PubMedSource",
    "RateLimiter",
    "ResponseCache",
    "parse_esearch",
    "shared_limiter",
]
