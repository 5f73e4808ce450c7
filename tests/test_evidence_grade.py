"""One evidence grade (issue 11): computed once, by the annotation, with the vocabulary, and shown
the same by ``ebm annotate`` (``Annotation.evidence``), ``ebm ask``/``ebm explain`` and the web
card (``Answer.grade``, from S_SoE, which reads the annotation's study evidence)."""

from __future__ import annotations

from pathlib import Path

from ebm.ask import AskConfig, Pipeline
from ebm.frame import frame_from_args
from ebm.medline import iter_bundled
from tests import scoring_pool


def test_annotate_and_ask_show_the_same_grade_for_every_bundled_citation_with_metadata(
    concept_index: Path,
) -> None:
    """A third of the bundled citations with publication types or MeSH headings (every third of
    697: annotating all takes minutes on a loaded machine), and 50 text-only ones."""
    every = [c for c in iter_bundled() if c.publication_types is not None or c.mesh_headings is not None]
    assert len(every) > 600
    with_metadata = every[::3]
    text_only = [c for c in iter_bundled() if c.publication_types is None and c.mesh_headings is None][:50]
    pipeline = Pipeline(
        AskConfig(cache=False, year=2024), source=scoring_pool.store(), annotator=scoring_pool.annotator()
    )
    frame = frame_from_args("therapy", problem="myocardial ischemia")
    annotations, _ = pipeline.annotate(with_metadata + text_only)
    answers = {a.pmid: a for a in pipeline.rank(frame, annotations)}
    graded = 0
    for ann in annotations:
        answer = answers[ann.citation.pmid]
        assert answer.grade == ann.evidence.grade, ann.citation.pmid
        assert answer.study_class == ann.evidence.study_class, ann.citation.pmid
        assert answer.to_dict()["grade"] == ann.to_dict()["evidence"]["grade"]
        graded += ann.evidence.grade is not None
    assert graded > 150  # most citations with metadata get a grade
    # text-only records: the grade comes from the design predicted from the text (issue 13)
    text_only_ann = annotations[len(with_metadata) :]
    assert all(a.evidence.source == "text" and a.evidence.predicted for a in text_only_ann)
    assert sum(a.evidence.grade is not None for a in text_only_ann) >= 45
    for a in text_only_ann:
        answer = answers[a.citation.pmid]
        assert answer.evidence_line.endswith(f"grade {a.evidence.grade or 'unknown'}")
        assert answer.to_dict()["design"] == a.to_dict()["design"]
