"""The shipped resources for tests: the library takes them explicitly; these helpers pass the
shipped rules, the real MeSH vocabulary and the tests' concept index (request the
``concept_index`` fixture before calling anything that matches concepts). ``tests.tiny`` has
the same helpers over the tiny MeSH subset (unit tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.resource_helpers import ResourceHelpers
from tests.scoring_pool import test_home


def _resources() -> Any:  # ebm.resources.Resources
    from tests.conftest import shipped_resources

    return shipped_resources(test_home() / "concepts")


def _rules(directory: Path) -> Any:
    from ebm.resources import Resources

    return Resources.load(directory, index_dir=test_home() / "concepts").rules


_helpers = ResourceHelpers(_resources, _rules)
resources = _helpers.resources
load_rules = _helpers.load_rules
default_pipeline = _helpers.default_pipeline
default_matcher = _helpers.default_matcher
default_detector = _helpers.default_detector
default_model = _helpers.default_model
default_problem_ranker = _helpers.default_problem_ranker
default_cues = _helpers.default_cues
default_kinds = _helpers.default_kinds
default_problem_kinds = _helpers.default_problem_kinds
annotate = _helpers.annotate
extract_interventions = _helpers.extract_interventions
extract_problems = _helpers.extract_problems
extract_population = _helpers.extract_population
primary = _helpers.primary
