"""The text pipeline is built and run with no network and no downloaded model."""

from __future__ import annotations

from pathlib import Path

from ebm.medline.reader import read_citations
from ebm.paths import data_dir
from ebm.resources import shipped_rules_dir
from ebm.text.negation import NegationDetector, load_negation_rules
from ebm.text.pipeline import TextPipeline
from tests import netguard


def test_pipeline_builds_and_runs_offline(shared: Path) -> None:
    before = list(netguard.attempts)
    home_before = sorted(data_dir().rglob("*")) if data_dir().exists() else []
    pipeline = TextPipeline()  # fresh: tokenizer, abbreviation detector
    tokenize = lambda s: [t.text for t in pipeline.nlp.tokenizer(s) if not t.is_space]  # noqa: E731
    detector = NegationDetector(load_negation_rules(shipped_rules_dir() / "negation_triggers.tsv", tokenize))
    # a blank English pipeline: no trained components, no model package
    assert pipeline.nlp.pipe_names == []
    assert pipeline.nlp.meta.get("name") in (None, "pipeline")
    citations = [c for c in read_citations(shared / "medline" / "medline16n0902.xml.gz") if c.has_abstract]
    assert len(citations) > 400
    n_sentences = n_abbrev = n_neg = 0
    for c in citations:
        doc = pipeline.process(c)
        n_sentences += len(doc.sentences)
        n_abbrev += len(doc.abbreviations)
        n_neg += sum(detector.negated(doc, i, i + 1) for i in range(len(doc.tokens)))
    assert n_sentences > 4000 and n_abbrev > 300 and n_neg > 100
    # nothing tried to reach the network (even if a library swallowed the refusal)...
    assert netguard.attempts == before
    # ...and nothing was written to the data directory
    home_after = sorted(data_dir().rglob("*")) if data_dir().exists() else []
    assert home_after == home_before
