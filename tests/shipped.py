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


ResourceHelpers(_resources, _rules).export(globals())  # resources, load_rules, annotate, ... (EXPORTS)
