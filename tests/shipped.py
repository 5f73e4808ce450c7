"""The shipped resources for tests: the library takes them explicitly; these helpers pass the
shipped rules, the real MeSH vocabulary and the tests' concept index (request the
``concept_index`` fixture before calling anything that matches concepts). ``tests.tiny`` has
the same helpers over the tiny MeSH subset (unit tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.scoring_pool import test_home


def resources() -> Any:  # ebm.resources.Resources
    from tests.conftest import shipped_resources

    return shipped_resources(test_home() / "concepts")


def load_rules(directory: Path | None = None) -> Any:
    from ebm.resources import Resources

    if directory is None:
        return resources().rules
    return Resources.load(directory, index_dir=test_home() / "concepts").rules


def default_pipeline() -> Any:
    return resources().pipeline


def default_matcher() -> Any:
    return resources().matcher


def default_detector() -> Any:
    return resources().negation


def default_model() -> Any:
    return resources().outcome_model


def default_problem_ranker() -> Any:
    return resources().problem_ranker


def default_cues() -> Any:
    return resources().outcome_cues


def default_kinds() -> Any:
    return resources().value("intervention_kinds")


def default_problem_kinds() -> Any:
    return resources().value("problem_kinds")


def annotate(doc: Any, matcher: Any = None, negation: Any = "default", abbreviations: bool = True) -> Any:
    from ebm.concepts.annotate import annotate as annotate_concepts

    r = resources()
    neg = r.negation if negation == "default" else negation
    return annotate_concepts(doc, matcher or r.matcher, neg, abbreviations)


def extract_interventions(doc: Any, concepts: Any, **kw: Any) -> Any:
    from extractors.intervention import extract_interventions as extract

    r = resources()
    args = {
        "vocabulary": r.vocabulary,
        "cues": r.value("intervention_cues"),
        "kinds": r.value("intervention_kinds"),
        "terms": r.value("intervention_terms"),
        "words": r.value("population_words"),
    }
    args.update(kw)
    return extract(doc, concepts, **args)


def extract_problems(doc: Any, concepts: Any, scope: str = "all", **kw: Any) -> Any:
    from extractors.problem import extract_problems as extract

    r = resources()
    args = {"vocabulary": r.vocabulary, "kinds": r.value("problem_kinds")}
    args.update(kw)
    return extract(doc, concepts, scope, **args)  # type: ignore[arg-type]


def extract_population(doc: Any, concepts: Any) -> Any:
    from extractors.population import extract_population as extract

    return extract(doc, concepts, resources().value("population_words"))


def primary(ranker: Any, doc: Any, concepts: Any) -> Any:
    r = resources()
    return ranker.primary(doc, concepts, vocabulary=r.vocabulary, kinds=r.value("problem_kinds"))
