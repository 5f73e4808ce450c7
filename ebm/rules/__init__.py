"""Editable rule tables (``rules/``): generic loader, typed tables, MeSH validation.

``load_rules(directory | None)`` returns the validated ``RuleSet`` (task indicators, study
types, core journals, Clinical Queries filters) from ``directory`` (an edited copy of
``rules/``, as ``--rules DIR`` gives) or from the shipped tables; an invalid table raises
``InputError`` listing every problem with file, line and a suggestion.
"""

from __future__ import annotations

from pathlib import Path

from ebm.errors import InputError
from ebm.rules.tables import (
    ClinicalQueries,
    Journals,
    RuleSet,
    StudyEvidence,
    StudyTypes,
    TaskHit,
    TaskIndicators,
    TaskWeights,
)

__all__ = [
    "ClinicalQueries",
    "Journals",
    "RuleSet",
    "StudyEvidence",
    "StudyTypes",
    "TaskHit",
    "TaskIndicators",
    "TaskWeights",
    "load_rules",
]

_cache: dict[tuple[str, tuple[float, ...]], RuleSet] = {}


def load_rules(directory: str | Path | None = None) -> RuleSet:
    """The validated rule tables of ``directory`` (default: the shipped ``rules/``).

    Cached per directory until one of its tables changes on disk. Tables that passed
    validation before, unchanged under the same code and MeSH data, load without MeSH
    (``ebm.rules.verdicts``); any other table is validated.
    """
    from ebm.paths import rules_dir
    from ebm.rules.check import load_checked
    from ebm.rules.tables import TABLE_FILES, table_path
    from ebm.rules.verdicts import Verdicts

    d = Path(directory) if directory is not None else rules_dir()
    if not d.is_dir():
        raise InputError(f"rules directory not found: {d}")
    paths = [table_path(d, name) for name in TABLE_FILES]
    stamp = tuple(p.stat().st_mtime if p.exists() else -1.0 for p in paths)
    key = (str(d.resolve()), stamp)
    if key in _cache:
        return _cache[key]
    loaded, problems = load_checked(d, None, Verdicts())
    if problems:
        shown = "\n".join(str(p) for p in sorted(problems, key=lambda p: p.sort_key)[:20])
        more = f"\n... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise InputError(f"invalid rule tables in {d} (run `ebm rules check {d}`):\n{shown}{more}")
    rules = RuleSet(d, **loaded)
    _cache[key] = rules
    return rules
