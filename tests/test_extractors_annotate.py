"""``Annotator``: every extractor over one citation, and the ``Annotation`` interface others use.

Unit tests: the shipped rules and models over the tiny MeSH subset (``tiny_resources``,
tests/fixtures/tiny_mesh); no MeSH concept index is built."""

from __future__ import annotations

import json
import pickle

import pytest

from ebm.citation import Citation
from ebm.medline import iter_bundled
from ebm.resources import Resources
from extractors.annotate import Annotation, Annotator

PMIDS = {"9505772", "16691061", "20369616"}


@pytest.fixture(scope="module")
def annotator(tiny_resources: Resources) -> Annotator:
    return Annotator(tiny_resources)


@pytest.fixture(scope="module")
def annotations(annotator: Annotator) -> dict[str, Annotation]:
    out = {c.pmid: annotator.annotate(c) for c in iter_bundled() if c.pmid in PMIDS}
    assert set(out) == PMIDS
    return out


def test_all_elements_of_a_trial(annotations) -> None:
    a = annotations["16691061"]  # cellulose sulfate gel in HIV-infected women
    assert a.population[0].text == "Fifty-nine HIV-infected women"
    assert a.primary_problem is not None and a.primary_problem.names == ("HIV Infections",)
    # the learned ranker's choice is one of the problems, its evidence saying why
    assert a.primary_problem.concepts == a.problems[0].concepts
    assert a.primary_problem.evidence[-1].startswith("learned ranker: primary problem (p ")
    assert a.primary_problem.concepts not in [c.concepts for c in a.co_problems]
    # "cellulose sulfate gel": the salt word stays with its chemical (no separate Sulfates)
    assert {"gel", "cellulose sulfate"} <= {c.text for c in a.interventions[:4]}
    assert not any("Sulfates" in c.names for c in a.interventions)
    assert "placebo" in {c.text for c in a.interventions}
    # PICO-data gives MeSH headings but no publication types: the design comes from the text
    # ("randomized, double-blind placebo-controlled study"), graded through design_grades.tsv
    assert a.citation.publication_types is None
    assert (a.evidence.grade, a.evidence.source, a.evidence.design) == (
        "A",
        "text",
        "randomized_controlled_trial",
    )
    assert a.evidence.predicted and a.evidence.sample_size == 59 == a.sample_size.value
    assert a.design == {**a.design_from_text, "source": "text"}  # type: ignore[dict-item]
    b = annotations["9505772"]  # MEDLINE: Randomized Controlled Trial
    assert (b.evidence.grade, b.evidence.source) == ("A", "publication types")
    assert b.design is not None and b.design["source"] == "publication types"


def test_top_outcomes_in_abstract_order(annotations) -> None:
    for a in annotations.values():
        tops = a.top_outcomes(3)
        assert len(tops) == min(3, sum(s.position != "title" for s in a.document.sentences))
        assert [o.sentence for o in tops] == sorted(o.sentence for o in tops)
        assert all(a.document.sentences[o.sentence].position != "title" for o in tops)
        best = {o.sentence for o in a.outcomes[: len(tops) + 1]}
        assert {o.sentence for o in tops} <= best  # the title, when ranked, is skipped


def test_to_dict_shape_is_json(annotations) -> None:
    a = annotations["20369616"]
    d = json.loads(json.dumps(a.to_dict(concepts=True)))
    assert set(d) == {
        "pmid",
        "title",
        "population",
        "primary_problem",
        "problems",
        "interventions",
        "outcomes",
        "evidence",
        "concepts",
        "design",
        "design_from_text",
        "sample_size",
        "human",
    }
    assert d["pmid"] == "20369616" and len(d["population"]) <= 3
    assert d["interventions"][0] == {**d["interventions"][0], "text": "remaxol", "concepts": [], "names": []}
    keys = {"text", "start", "end", "score", "sentence", "concepts", "names", "evidence"}
    assert all(set(c) == keys for c in d["population"] + d["problems"] + d["interventions"])
    assert set(d["primary_problem"]) == keys
    assert set(d["evidence"]) == {
        "grade",
        "study_class",
        "s_study",
        "reasons",
        "design",
        "source",
        "predicted",
        "probability",
    }
    # no publication types: a design predicted from the text, its record and the grade agree
    assert d["design"]["source"] == "text" and d["design"]["label"] == d["evidence"]["design"]
    assert d["evidence"]["predicted"] and d["evidence"]["grade"] == "A"
    assert d["sample_size"]["value"] == 494 and "494 patients" in d["sample_size"]["sentence"]
    assert d["human"] is True
    assert "concepts" not in a.to_dict()


def test_annotation_pickles(annotations) -> None:
    # The annotation cache (ebm/annotation_cache.py) stores pickled annotations.
    a = annotations["9505772"]
    b = pickle.loads(pickle.dumps(a))
    assert b.to_dict() == a.to_dict()


def test_citation_without_text(annotator: Annotator) -> None:
    a = annotator.annotate(Citation(pmid="1"))
    assert (a.population, a.problems, a.interventions, a.outcomes) == ([], [], [], [])
    assert a.primary_problem is None and a.top_outcomes() == []
    # nothing to read: the design classifier abstains (never its prior), the grade is unknown
    assert a.evidence.grade is None and a.evidence.design is None and not a.evidence.predicted
    assert a.evidence.reasons == ("no title or abstract text: no design predicted, grade unknown",)
    assert (a.design, a.design_from_text, a.sample_size, a.human) == (None, None, None, None)
    # a title alone is text: the classifier reads it
    t = annotator.annotate(Citation(pmid="2", title="A randomized controlled trial of aspirin"))
    assert t.evidence.predicted and t.design_from_text is not None
