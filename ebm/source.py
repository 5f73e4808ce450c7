"""The one narrow interface behind which citations come from: the local store or PubMed.

``ebm.store`` (local SQLite MEDLINE store) and ``ebm.pubmed`` (E-utilities) both implement
``CitationSource``, so query formulation, ``ebm ask`` and tests can swap one for the other.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Literal, Protocol

from ebm.citation import Citation
from ebm.errors import ServiceError

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


class SourceUnavailable(ServiceError):
    """The source cannot be reached or does not answer in time (connection refused, no
    answer, an answer too slow to finish). Unlike a refused query, no other query can fare
    better, so the relaxation ladder stops at the first one."""


class DeadlineExceeded(SourceUnavailable):
    """The question's own deadline (``AskConfig.deadline_s``) passed."""


@dataclass(frozen=True)
class Deadline:
    end: float  # time.monotonic() when it passes
    seconds: float  # as configured, for messages

    def remaining(self) -> float:
        return self.end - time.monotonic()


# The deadline of the question being answered in this thread (or task). A context variable,
# not a parameter, so the sources' narrow search/fetch interface stays as it is.
_deadline: ContextVar[Deadline | None] = ContextVar("ebm_question_deadline", default=None)


@contextmanager
def deadline(seconds: float | None) -> Iterator[Deadline | None]:
    """Everything in the block shares a deadline ``seconds`` from now (``None``: no deadline;
    an enclosing deadline that passes earlier still applies)."""
    outer = _deadline.get()
    if seconds is None:
        yield outer
        return
    mine = Deadline(time.monotonic() + seconds, seconds)
    if outer is not None and outer.end < mine.end:
        mine = outer
    token = _deadline.set(mine)
    try:
        yield mine
    finally:
        _deadline.reset(token)


def current_deadline() -> Deadline | None:
    return _deadline.get()


def check_deadline(before: str) -> None:
    """``DeadlineExceeded`` when the current question's deadline has passed."""
    d = _deadline.get()
    if d is not None and d.remaining() <= 0:
        raise DeadlineExceeded(
            f"the question took longer than its deadline of {d.seconds:g} s "
            f"(stopped before {before}; raise it with --deadline)"
        )
