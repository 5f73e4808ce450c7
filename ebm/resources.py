"""Everything the pipeline reads besides the question and the citations, from ONE rules directory.

``Resources.load(rules_dir=None | DIR)`` reads and validates every table declared in
``ebm.rules.registry`` from that directory (default: the shipped ``rules/``) and raises
``InputError`` with the same ``file:line`` lines ``ebm rules check`` prints when any is
broken: never a silent fallback to the shipped tables. The MeSH vocabulary, the concept
matcher, the negation detector, the text pipeline and the shipped models load on first use
and are then shared.

Library code receives a ``Resources`` (or the one piece it needs) as a parameter; only the
CLI, ``AskConfig``/``ebm.ask`` and the web app build one. ``digest(consumer)`` is a digest of
exactly the tables (and models, code and data) a consumer reads, for cache keys.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ebm.errors import InputError
from ebm.rules.registry import ANNOTATION, MATCHER, TableSpec, specs
from ebm.rules.table import Table

if TYPE_CHECKING:
    from ebm.concepts.matcher import DictionaryMatcher
    from ebm.mesh import MeshVocabulary
    from ebm.question import QuestionCues, RoleModel
    from ebm.rules.tables import RuleSet
    from ebm.text.negation import NegationDetector
    from ebm.text.pipeline import TextPipeline
    from ebm.text.words import Words
    from extractors.design import DesignModel
    from extractors.design_grade import DesignGrades
    from extractors.findings import FindingsModel, OutcomeWords
    from extractors.outcome import OutcomeModel
    from extractors.problem_ranker import ProblemRanker

__all__ = ["MODEL_FILES", "Resources", "shipped_rules_dir"]

# Shipped models and data files (in ebm/data) besides the outcome model and the problem ranker.
MODEL_FILES = {
    "design": "models/design.npz",  # extractors.design (issue 13)
    "findings": "models/findings.json.gz",  # extractors.findings (issue 14)
    "outcome_words": "models/findings.outcome_words.tsv",  # extractors.findings
    "question_roles": "models/question_roles.json.gz",  # ebm.question
}


def shipped_rules_dir() -> Path:
    """The rule tables shipped with the package (``rules/``)."""
    from importlib import resources

    return Path(str(resources.files("rules")))


class Resources:
    """The validated tables of one rules directory, with the vocabulary, index and models."""

    def __init__(
        self,
        rules_dir: Path,
        tables: dict[str, tuple[Table, Any]],
        *,
        vocabulary: MeshVocabulary | None = None,
        index_dir: Path | None = None,
        outcome_model: Path | None = None,
        problem_ranker: Path | None = None,
        models: dict[str, Path] | None = None,
    ) -> None:
        self.rules_dir = rules_dir
        self._tables = tables
        self._vocabulary = vocabulary
        self._index_dir = index_dir
        self._outcome_model_path = outcome_model
        self._problem_ranker_path = problem_ranker
        # other shipped models and data by name (MODEL_FILES), e.g. {"design": Path(...)}
        unknown = set(models or {}) - set(MODEL_FILES)
        if unknown:
            raise InputError(f"unknown model name(s) {sorted(unknown)} (known: {', '.join(MODEL_FILES)})")
        self._model_paths = {k: Path(v) for k, v in (models or {}).items()}

    @classmethod
    def load(
        cls,
        rules_dir: str | Path | None = None,
        *,
        vocabulary: MeshVocabulary | None = None,
        index_dir: Path | None = None,
        outcome_model: Path | None = None,
        problem_ranker: Path | None = None,
        models: dict[str, Path] | None = None,
        remember: bool = True,
    ) -> Resources:
        """Read and validate every declared table of ``rules_dir`` (default: shipped).

        ``vocabulary``: a MeSH vocabulary (default: the shipped MeSH 2024, on first use);
        ``index_dir``: the concept index (default: ``concepts`` in the data directory);
        ``remember``: skip validating tables that passed before unchanged (``ebm.rules.verdicts``).
        """
        from ebm.rules.check import format_problems, load_checked
        from ebm.rules.verdicts import Verdicts

        d = Path(rules_dir) if rules_dir is not None else shipped_rules_dir()
        if not d.is_dir():
            raise InputError(f"rules directory not found: {d}")
        if index_dir is None:
            from ebm.concepts.index import index_dir as default_index

            index_dir = default_index()
        verdicts = Verdicts() if remember and vocabulary is None else None
        tables, problems = load_checked(d, vocabulary, verdicts, index=index_dir)
        if problems:
            raise InputError(
                f"invalid rule tables in {d} (run `ebm rules check {d}`):\n{format_problems(problems)}"
            )
        return cls(
            d,
            tables,
            vocabulary=vocabulary,
            index_dir=index_dir,
            outcome_model=outcome_model,
            problem_ranker=problem_ranker,
            models=models,
        )

    # --- tables -----------------------------------------------------------------------------

    def table(self, name: str) -> Table:
        """The parsed rows of a declared table (for messages and round trips)."""
        return self._tables[name][0]

    def value(self, name: str) -> Any:
        """What a declared table builds (``TableSpec.build``); KeyError for an optional table
        the directory does not have."""
        return self._tables[name][1]

    def has(self, name: str) -> bool:
        return name in self._tables

    @functools.cached_property
    def rules(self) -> RuleSet:
        """The four scoring/query tables, as the scorer and the query builder take them."""
        from ebm.rules.tables import RuleSet

        return RuleSet(
            self.rules_dir,
            self.value("task_indicators"),
            self.value("study_types"),
            self.value("journals"),
            self.value("clinical_queries"),
        )

    @property
    def stopwords(self) -> frozenset[str]:
        return self.value("stopwords")  # type: ignore[no-any-return]

    @functools.cached_property
    def words(self) -> Words:
        """The scorer's word normaliser, with this directory's stop words."""
        from ebm.text.words import Words

        return Words(self.stopwords)

    # --- vocabulary, index, models ------------------------------------------------------------

    @property
    def vocabulary(self) -> MeshVocabulary:
        if self._vocabulary is None:
            from ebm.mesh import MeshVocabulary

            self._vocabulary = MeshVocabulary()
        return self._vocabulary

    @property
    def index_dir(self) -> Path:
        assert self._index_dir is not None
        return self._index_dir

    @functools.cached_property
    def matcher(self) -> DictionaryMatcher:
        """The dictionary matcher over the concept index, with this directory's tables."""
        return self.dictionary_matcher()

    def dictionary_matcher(self, directory: Path | None = None, **options: Any) -> DictionaryMatcher:
        """A dictionary matcher over ``directory`` (default: the concept index) with this
        directory's synonyms, adjectives, stoplist, stopwords and semantic groups."""
        from ebm.concepts.matcher import DictionaryMatcher

        index = directory or self.index_dir
        shipped = _shipped_values()
        stop = self.stopwords if self.stopwords != shipped.get("stopwords") else None
        regroup = None
        if self.value("semantic_groups").by_key != shipped["semantic_groups"].by_key:
            groups, voc = self.value("semantic_groups"), self.vocabulary

            def regroup(cui: str) -> tuple[str, ...] | None:
                d = voc.get(cui)
                return groups.groups(d.ui, d.tree_numbers) if d is not None else None

        return DictionaryMatcher(
            index,
            self.value("concept_stoplist"),
            self.value("concept_synonyms"),
            self.value("concept_adjectives"),
            stopwords=stop,
            regroup=regroup,
            **options,
        )

    @functools.cached_property
    def pipeline(self) -> TextPipeline:
        """The text pipeline (spaCy tokenizer, sentences, abbreviations): slow to build."""
        from ebm.text.pipeline import TextPipeline

        return TextPipeline()

    @functools.cached_property
    def negation(self) -> NegationDetector:
        from ebm.text.negation import NegationDetector, negation_rules_from_table

        nlp = self.pipeline.nlp
        rules = negation_rules_from_table(
            self.table("negation_triggers"),
            lambda s: [t.text for t in nlp.tokenizer(s) if not t.is_space],
        )
        return NegationDetector(rules)

    @functools.cached_property
    def outcome_model(self) -> OutcomeModel:
        from extractors.outcome import load_model, shipped_model_path

        return load_model(self._outcome_model_path or shipped_model_path())

    @functools.cached_property
    def problem_ranker(self) -> ProblemRanker:
        from extractors.problem_ranker import load_problem_ranker, shipped_problem_ranker_path

        return load_problem_ranker(self._problem_ranker_path or shipped_problem_ranker_path())

    @functools.cached_property
    def outcome_cues(self) -> Any:  # CueTable
        from extractors.outcome_cues import CueTable

        return CueTable(self.value("outcome_cues"), self.table("outcome_cues").path)

    def model_path(self, name: str) -> Path:
        """The file of a model or data file named in ``MODEL_FILES`` (given, else shipped)."""
        from ebm.paths import package_data

        return self._model_paths.get(name) or package_data(MODEL_FILES[name])

    @functools.cached_property
    def design_model(self) -> DesignModel:
        """The study-design classifier (issue 13)."""
        from extractors.design import load_design_model

        return load_design_model(self.model_path("design"))

    @property
    def design_grades(self) -> DesignGrades:
        """design -> study class, S_study, grade (``design_grades.tsv`` of this directory)."""
        return self.value("design_grades")  # type: ignore[no-any-return]

    @functools.cached_property
    def findings_model(self) -> FindingsModel:
        """The findings extractor's sentence ranker and direction classifier (issue 14)."""
        from extractors.findings import load_findings_model

        return load_findings_model(self.model_path("findings"))

    @functools.cached_property
    def outcome_words(self) -> OutcomeWords:
        """The words abstracts report an outcome with ('fever': temperature, antipyresis)."""
        from extractors.findings import load_outcome_words

        return load_outcome_words(self.model_path("outcome_words"))

    @property
    def question_cues(self) -> QuestionCues:
        """Task and role phrases of questions in plain words (``question_cues.tsv``)."""
        return self.value("question_cues")  # type: ignore[no-any-return]

    @functools.cached_property
    def role_model(self) -> RoleModel:
        """The question chunk role model (``ebm.question``)."""
        from ebm.question import load_role_model

        return load_role_model(self.model_path("question_roles"))

    # --- cache keys -----------------------------------------------------------------------------

    def digest(self, consumer: str | tuple[str, ...]) -> str:
        """A digest of exactly what ``consumer`` (a ``registry`` consumer name, or several)
        reads from this directory: the declared tables' bytes, and for annotations also the
        models, the concept index's build metadata and the annotating code."""
        wanted = (consumer,) if isinstance(consumer, str) else tuple(consumer)
        h = hashlib.sha256(f"resources {' '.join(sorted(wanted))}\0".encode())
        for spec in specs(wanted):
            h.update(spec.name.encode() + b"\0")
            h.update(_table_bytes(spec, self))
        if set(wanted) & set(ANNOTATION):
            from ebm.mesh import data_digest

            h.update(data_digest().encode())
            h.update(json.dumps(self.outcome_model.to_json(), sort_keys=True, default=str).encode())
            h.update(json.dumps(self.problem_ranker.to_json(), sort_keys=True, default=str).encode())
            h.update(hashlib.sha256(self.model_path("design").read_bytes()).digest())
            if MATCHER in wanted:
                from ebm.concepts.index import read_meta

                h.update(json.dumps(read_meta(self.index_dir), sort_keys=True, default=str).encode())
        return h.hexdigest()[:32]


def _table_bytes(spec: TableSpec, resources: Resources) -> bytes:
    if not resources.has(spec.name):
        return b"-"
    return resources.table(spec.name).path.read_bytes()


@functools.cache
def _shipped_values() -> dict[str, Any]:
    """The shipped tables' values the concept index was built with (stopwords, groups)."""
    from ebm.rules.table import load

    out: dict[str, Any] = {}
    d = shipped_rules_dir()
    for spec in specs():
        if spec.name in ("stopwords", "semantic_groups"):
            out[spec.name] = spec.build(load(spec.path(d), spec.table_columns()))
    return out
