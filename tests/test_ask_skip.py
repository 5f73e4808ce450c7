"""A citation the pipeline cannot process does not break the question (issue 12): a retrieved
record with a 2 MB abstract (spaCy's E088) is skipped, the other candidates are ranked, and the
answer says which was skipped and why; ``ebm explain`` of it is a one-line error."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ebm.ask import AskConfig, Pipeline
from ebm.citation import AbstractSection, Citation
from ebm.errors import InputError
from ebm.frame import load_frame
from tests import scoring_pool

ROOT = Path(__file__).resolve().parents[1]


class Bloated:
    """The local store, except that one PMID comes back with a 2 MB abstract (as a store
    ingested before the ingest cap would return it)."""

    name = "local"

    def __init__(self, store: Any, pmid: str | None = None) -> None:
        self.store, self.pmid = store, pmid

    def search(self, query: str, limit: int = 50, sort: Any = "relevance") -> Any:
        return self.store.search(query, limit=limit, sort=sort)

    def fetch(self, pmids: Sequence[str]) -> list[Citation]:
        if self.pmid is None and len(pmids) > 1:
            self.pmid = pmids[1]  # the second candidate of the first question
        out = []
        for c in self.store.fetch(pmids):
            if c.pmid == self.pmid:
                c = replace(c, abstract=(AbstractSection("Fever was treated. " * 110_000),))
            out.append(c)
        return out


def test_a_huge_abstract_is_skipped_with_a_note(concept_index: Path, tmp_path: Path) -> None:
    frame = load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")
    source = Bloated(scoring_pool.store())
    config = AskConfig(candidates=10, year=2024, cache_path=tmp_path / "cache.sqlite")
    with Pipeline(config, source=source, annotator=scoring_pool.annotator()) as p:  # type: ignore[arg-type]
        result = p.ask(frame)
    pmids = [a.pmid for a in result.answers]
    assert source.pmid not in pmids and len(pmids) == 9
    assert len(result.skipped) == 1
    note = result.skipped[0]
    assert note.startswith(f"skipped: PMID {source.pmid}: title and abstract of ") and "exceed" in note
    assert result.to_dict()["skipped"] == [note]
    # the same question again: the others come from the cache, the huge one is skipped again
    with Pipeline(config, source=source, annotator=scoring_pool.annotator()) as p:  # type: ignore[arg-type]
        again = p.ask(frame)
    assert [a.pmid for a in again.answers] == pmids and again.skipped == result.skipped


def test_explaining_the_huge_citation_is_a_clear_error(concept_index: Path) -> None:
    frame = load_frame(ROOT / "questions" / "fever_acetaminophen_ibuprofen.yaml")
    source = Bloated(scoring_pool.store(), pmid="1621668")
    config = AskConfig(cache=False, year=2024)
    with (
        Pipeline(config, source=source, annotator=scoring_pool.annotator()) as p,  # type: ignore[arg-type]
        pytest.raises(InputError, match=r"PMID 1621668 cannot be explained: skipped: PMID 1621668: title"),
    ):
        p.explain("1621668", frame)
