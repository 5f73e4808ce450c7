"""``ebm ask --retrieval pico``: candidates whose STORED annotations match the frame's elements.

The paper annotated at question time because it could not "pre-extract PICO elements from the
entire MEDLINE database and directly index the results" (section 12). With ``ebm corpus
annotate`` done, the store has that index (``ebm.store.annotations``), and a frame's concepts
become a query over it: ``(P1[problem] OR P2[problem]) AND (I1[intervention] OR ...) AND
(C1[population] ...)`` with MeSH explosion, relaxed as the BM25 ladder is (drop the population,
then the interventions) until enough citations match. The query has no text words, so the store
returns its matches newest first (no retrieval score): the rerankers order the candidates.
"""

from __future__ import annotations

from ebm.errors import EbmError
from ebm.frame_concepts import FrameConcepts
from ebm.query import Attempt, Retrieval
from ebm.source import CitationSource, SearchResult, check_deadline

__all__ = ["pico_ladder", "pico_retrieve"]


def _slot(fc: FrameConcepts, slot: str, field: str) -> str | None:
    uis = sorted({c.cui for v in fc.slot(slot) for c in v.concepts if c.cui.startswith("D")})
    if not uis:
        return None
    return "(" + " OR ".join(f"{ui}[{field}]" for ui in uis) + ")"


def pico_ladder(fc: FrameConcepts) -> list[tuple[str, tuple[str, ...]]]:
    """The PICO queries of ``fc``, strictest first, each with the relaxations it took."""
    problem = _slot(fc, "problem", "problem")
    interventions = [q for q in (_slot(fc, "intervention", "intervention"),
                                 _slot(fc, "comparison", "intervention")) if q]  # fmt: skip
    intervention = "(" + " OR ".join(interventions) + ")" if interventions else None
    population = _slot(fc, "population", "population")
    steps: list[tuple[list[str | None], tuple[str, ...]]] = [
        ([problem, intervention, population], ()),
        ([problem, intervention], ("drop population",)),
        ([problem], ("drop population", "drop intervention")),
    ]
    out: list[tuple[str, tuple[str, ...]]] = []
    for parts, relaxations in steps:
        query = " AND ".join(p for p in parts if p)
        if query and query not in (q for q, _ in out):
            out.append((query, relaxations))
    if not out and intervention:
        out.append((intervention, ("no problem concept",)))
    return out


def pico_retrieve(fc: FrameConcepts, source: CitationSource, min_hits: int, limit: int) -> Retrieval:
    """Search the store's PICO index for ``fc``, relaxing until ``min_hits`` match; the attempt
    with the most hits when none reaches it. A source without stored annotations (PubMed, an
    unannotated store) is an ``EbmError`` saying so."""
    ladder = pico_ladder(fc)
    if not ladder:
        raise EbmError("--retrieval pico: the frame has no problem or intervention concept to match")
    attempts: list[Attempt] = []
    best: tuple[int, str, tuple[str, ...], SearchResult] | None = None
    for query, relaxations in ladder:
        check_deadline(f"PICO query {len(attempts) + 1}")
        result = source.search(query, limit=limit)
        attempts.append(Attempt(query, relaxations, result.count))
        if best is None or result.count > best[0]:
            best = (result.count, query, relaxations, result)
        if result.count >= min_hits:
            break
    assert best is not None
    _, query, relaxations, result = best
    return Retrieval(query, relaxations, result, tuple(attempts))
