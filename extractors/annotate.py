"""Run every extractor over one citation: ``Annotator.annotate(citation) -> Annotation``.

The pipeline is explicit: an ``Annotator`` holds the text pipeline, the concept matcher, the
outcome model and the rule tables it was configured with, so tests and ``--rules DIR`` can
swap any of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from ebm.citation import Citation
from ebm.concepts.annotate import Concept
from ebm.concepts.annotate import annotate as annotate_concepts
from ebm.concepts.matcher import ConceptMatcher, default_matcher
from ebm.rules import RuleSet, load_rules
from ebm.text.document import Document
from extractors.candidate import Candidate
from extractors.evidence import Evidence, grade_evidence
from extractors.intervention import extract_interventions
from extractors.outcome import OutcomeCandidate, OutcomeModel, default_model, extract_outcomes
from extractors.population import extract_population
from extractors.problem_ranker import ProblemRanker, default_problem_ranker

if TYPE_CHECKING:  # the text pipeline imports spaCy: only an Annotator needs it, not an Annotation
    from ebm.text.pipeline import TextPipeline


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
        }
        if concepts:
            d["concepts"] = [c.to_dict() for c in self.concepts]
        return d


class Annotator:
    def __init__(
        self,
        pipeline: TextPipeline | None = None,
        matcher: ConceptMatcher | None = None,
        outcome_model: OutcomeModel | None = None,
        rules: RuleSet | None = None,
        problem_ranker: ProblemRanker | None = None,
    ) -> None:
        if pipeline is None:
            from ebm.text.pipeline import default_pipeline

            pipeline = default_pipeline()
        self.pipeline = pipeline
        self.matcher = matcher or default_matcher()
        self.outcome_model = outcome_model or default_model()
        self.rules = rules or load_rules()
        self.problem_ranker = problem_ranker or default_problem_ranker()

    def annotate(self, citation: Citation) -> Annotation:
        """Every extractor over the citation's title and abstract (either may be missing: a
        citation without text gets empty lists and whatever its metadata says about evidence)."""
        doc = self.pipeline.process(citation)
        concepts = annotate_concepts(doc, self.matcher)
        problems, primary = self.problem_ranker.primary(doc, concepts)
        interventions = extract_interventions(doc, concepts)
        outcomes = extract_outcomes(
            doc,
            concepts,
            primary_problem=primary.concepts[0] if primary else None,
            interventions=[i.concepts[0] for i in interventions[:5] if i.concepts],
            model=self.outcome_model,
        )
        return Annotation(
            citation=citation,
            document=doc,
            concepts=concepts,
            population=extract_population(doc, concepts),
            problems=problems,
            interventions=interventions,
            outcomes=outcomes,
            evidence=grade_evidence(citation, self.rules),
            primary=primary,
        )


@cache
def default_annotator() -> Annotator:
    return Annotator()


def annotate(citation: Citation) -> Annotation:
    """All extractors over ``citation`` with the default configuration."""
    return default_annotator().annotate(citation)
