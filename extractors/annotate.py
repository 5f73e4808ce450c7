"""Run every extractor over one citation: ``Annotator.annotate(citation) -> Annotation``.

The pipeline is explicit: an ``Annotator`` holds the ``Resources`` of one rules directory
(text pipeline, concept matcher, negation, models and every rule table) and passes each
extractor exactly the pieces it reads, so ``--rules DIR`` reaches every table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ebm.citation import Citation
from ebm.concepts.annotate import Concept
from ebm.concepts.annotate import annotate as annotate_concepts
from ebm.text.document import Document
from extractors.candidate import Candidate
from extractors.design import design_record, predict_design
from extractors.evidence import Evidence, TextDesign, grade_evidence
from extractors.intervention import extract_interventions
from extractors.outcome import OutcomeCandidate, extract_outcomes
from extractors.population import extract_population
from extractors.sample_size import SampleSize, extract_sample_size

if TYPE_CHECKING:
    from ebm.resources import Resources


@dataclass
class Annotation:
    citation: Citation
    document: Document
    concepts: list[Concept]
    population: list[Candidate]  # best first; [0] is the population
    problems: list[Candidate]  # every problem, by the rules' prominence (whole abstract)
    interventions: list[Candidate]  # all interventions under study, best first
    outcomes: list[OutcomeCandidate]  # every sentence, most probable outcome first
    evidence: Evidence
    # the primary problem, one of ``problems`` chosen by the learned ranker (with its evidence)
    primary: Candidate | None = None
    # issue 13: {label, probability, probabilities, source} (publication types when they name a
    # design, else the text's), the classifier's own output, the sample size, human or not
    design: dict[str, Any] | None = None
    design_from_text: dict[str, Any] | None = None
    sample_size: SampleSize | None = None
    human: bool | None = None

    @property
    def primary_problem(self) -> Candidate | None:
        return self.primary

    @property
    def co_problems(self) -> list[Candidate]:
        """The problems other than the primary one, by prominence."""
        ui = self.primary.concepts if self.primary else None
        return [c for c in self.problems if c.concepts != ui]

    def top_outcomes(self, n: int = 3) -> list[OutcomeCandidate]:
        """The ``n`` most probable outcome sentences, in abstract order (the title is never one)."""
        body = [o for o in self.outcomes if self.document.sentences[o.sentence].position != "title"]
        return sorted(body[:n], key=lambda o: o.sentence)

    def to_dict(self, concepts: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "pmid": self.citation.pmid,
            "title": self.citation.title,
            "population": [c.to_dict() for c in self.population[:3]],
            "primary_problem": self.primary.to_dict() if self.primary else None,
            "problems": [c.to_dict() for c in self.problems],
            "interventions": [c.to_dict() for c in self.interventions],
            "outcomes": [o.to_dict() for o in self.outcomes],
            "evidence": self.evidence.to_dict(),
            "design": self.design,
            "design_from_text": self.design_from_text,
            "sample_size": None if self.sample_size is None else self.sample_size.to_dict(),
            "human": self.human,
        }
        if concepts:
            d["concepts"] = [c.to_dict() for c in self.concepts]
        return d


class Annotator:
    """Every extractor with the resources of one rules directory (``ebm.resources``)."""

    def __init__(self, resources: Resources) -> None:
        self.resources = resources

    @property
    def matcher(self) -> Any:  # the ConceptMatcher frames are matched with too
        return self.resources.matcher

    def annotate(self, citation: Citation) -> Annotation:
        """Every extractor over the citation's title and abstract (either may be missing: a
        citation without text gets empty lists and whatever its metadata says about evidence)."""
        r = self.resources
        voc = r.vocabulary
        doc = r.pipeline.process(citation)
        concepts = annotate_concepts(doc, r.matcher, r.negation)
        problems, primary = r.problem_ranker.primary(
            doc, concepts, vocabulary=voc, kinds=r.value("problem_kinds")
        )
        words = r.value("population_words")
        interventions = extract_interventions(
            doc,
            concepts,
            vocabulary=voc,
            cues=r.value("intervention_cues"),
            kinds=r.value("intervention_kinds"),
            terms=r.value("intervention_terms"),
            words=words,
        )
        outcomes = extract_outcomes(
            doc,
            concepts,
            primary_problem=primary.concepts[0] if primary else None,
            interventions=[i.concepts[0] for i in interventions[:5] if i.concepts],
            model=r.outcome_model,
            cues=r.outcome_cues,
        )
        prediction = predict_design(r.design_model, citation.title, citation.abstract_text)
        size = extract_sample_size(citation.abstract_text)
        record = design_record(citation, prediction, size, r.design_model.classes)
        evidence = grade_evidence(
            citation, r.value("study_types"), voc, TextDesign(prediction, size), r.design_grades
        )
        return Annotation(
            citation=citation,
            document=doc,
            concepts=concepts,
            population=extract_population(doc, concepts, words),
            problems=problems,
            interventions=interventions,
            outcomes=outcomes,
            evidence=evidence,
            primary=primary,
            design=record["design"],
            design_from_text=record["design_from_text"],
            sample_size=size,
            human=record["human"],
        )
