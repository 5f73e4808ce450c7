"""Test helpers that pass a ``Resources`` explicitly to the library, as the CLI does:
``tests.shipped`` binds them to the shipped rules and the full MeSH index (integration tests),
``tests.tiny`` to the tiny MeSH subset (unit tests). One implementation, two resource sets."""

from __future__ import annotations

from collections.abc import Callable, MutableMapping
from pathlib import Path
from typing import Any

# The names ``tests.shipped`` and ``tests.tiny`` export (``ResourceHelpers.export``).
EXPORTS = (
    "resources",
    "load_rules",
    "default_pipeline",
    "default_matcher",
    "default_detector",
    "default_model",
    "default_problem_ranker",
    "default_cues",
    "default_kinds",
    "default_problem_kinds",
    "annotate",
    "extract_interventions",
    "extract_problems",
    "extract_population",
    "primary",
)


class ResourceHelpers:
    """The library's entry points with every resource taken from ``resources()``."""

    def __init__(self, resources: Callable[[], Any], rules_loader: Callable[[Path], Any]) -> None:
        self.resources = resources  # () -> ebm.resources.Resources
        self._rules_loader = rules_loader  # rules directory -> its RuleSet, same vocabulary and index

    def export(self, namespace: MutableMapping[str, Any]) -> None:
        """Bind every name of ``EXPORTS`` in a module's ``globals()`` to this helper's method."""
        for name in EXPORTS:
            namespace[name] = getattr(self, name)

    def load_rules(self, directory: Path | None = None) -> Any:
        return self.resources().rules if directory is None else self._rules_loader(directory)

    def default_pipeline(self) -> Any:
        return self.resources().pipeline

    def default_matcher(self) -> Any:
        return self.resources().matcher

    def default_detector(self) -> Any:
        return self.resources().negation

    def default_model(self) -> Any:
        return self.resources().outcome_model

    def default_problem_ranker(self) -> Any:
        return self.resources().problem_ranker

    def default_cues(self) -> Any:
        return self.resources().outcome_cues

    def default_kinds(self) -> Any:
        return self.resources().value("intervention_kinds")

    def default_problem_kinds(self) -> Any:
        return self.resources().value("problem_kinds")

    def annotate(
        self, doc: Any, matcher: Any = None, negation: Any = "default", abbreviations: bool = True
    ) -> Any:
        from ebm.concepts.annotate import annotate as annotate_concepts

        r = self.resources()
        neg = r.negation if negation == "default" else negation
        return annotate_concepts(doc, matcher or r.matcher, neg, abbreviations)

    def extract_interventions(self, doc: Any, concepts: Any, **kw: Any) -> Any:
        from extractors.intervention import extract_interventions as extract

        r = self.resources()
        args = {
            "vocabulary": r.vocabulary,
            "cues": r.value("intervention_cues"),
            "kinds": r.value("intervention_kinds"),
            "terms": r.value("intervention_terms"),
            "words": r.value("population_words"),
        }
        args.update(kw)
        return extract(doc, concepts, **args)

    def extract_problems(self, doc: Any, concepts: Any, scope: str = "all", **kw: Any) -> Any:
        from extractors.problem import extract_problems as extract

        r = self.resources()
        args = {"vocabulary": r.vocabulary, "kinds": r.value("problem_kinds")}
        args.update(kw)
        return extract(doc, concepts, scope, **args)  # type: ignore[arg-type]

    def extract_population(self, doc: Any, concepts: Any) -> Any:
        from extractors.population import extract_population as extract

        return extract(doc, concepts, self.resources().value("population_words"))

    def primary(self, ranker: Any, doc: Any, concepts: Any) -> Any:
        r = self.resources()
        return ranker.primary(doc, concepts, vocabulary=r.vocabulary, kinds=r.value("problem_kinds"))
