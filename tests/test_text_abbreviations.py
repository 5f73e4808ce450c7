"""Our abbreviation scan gives exactly what scispacy's AbbreviationDetector gives, on real abstracts."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest
import spacy
from scispacy.abbreviation import AbbreviationDetector  # noqa: F401  (registers the factory)

from ebm.medline.reader import read_citations
from ebm.text.abbreviations import AbbreviationFinder, expand_abbreviations
from ebm.text.pipeline import SEPARATOR, TextPipeline


@pytest.fixture(scope="module")
def texts(shared: Path) -> list[str]:
    out = [
        SEPARATOR.join([c.title or "", *(s.text for s in c.abstract or ())])
        for c in read_citations(shared / "medline" / "medline16n0902.xml.gz")
    ]
    tar = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    with tarfile.open(tar) as tf:
        for m in tf:
            p = Path(m.name)
            if m.isfile() and p.suffix == ".txt" and p.parent.name == "docs":
                f = tf.extractfile(m)
                assert f is not None
                out.append(f.read().decode("utf-8", errors="replace"))
                if len(out) >= 1200:
                    break
    return out


@pytest.mark.filterwarnings("ignore:.*W036")
def test_same_as_scispacy_detector(texts: list[str]) -> None:
    pipeline = TextPipeline()
    reference = spacy.blank("en")
    reference.tokenizer = pipeline.nlp.tokenizer
    reference.add_pipe("abbreviation_detector")
    finder = AbbreviationFinder()
    n_defs = 0
    for text in texts:
        sdoc = reference(text)
        expected = {(a.start, a.end, a._.long_form.text) for a in sdoc._.abbreviations}
        defs, spans = finder.find(sdoc, list(range(len(sdoc))))
        got = {(a.start, a.end, a.long_form) for a in spans}
        expected = {(s, e, " ".join(lf.split())) for s, e, lf in expected}
        assert got == expected, text[:80]
        n_defs += len(defs)
    assert n_defs > 1000  # the comparison covered many real definitions


def test_every_use_is_the_short_form(texts: list[str]) -> None:
    pipeline = TextPipeline()
    for text in texts[:300]:
        title, _, abstract = text.partition(SEPARATOR)
        doc = pipeline.process_text(title, abstract)
        for a in doc.abbreviation_spans:
            assert doc.span_text(a.start, a.end) == a.short_form
            assert doc.abbreviations[a.short_form] == a.long_form
        # every defined short form occurs; a definition occurrence sits next to a bracket
        assert set(doc.abbreviations) == {a.short_form for a in doc.abbreviation_spans}
        for a in doc.abbreviation_spans:
            if a.definition:
                before = doc.tokens[a.start - 1].text if a.start else ""
                after = doc.tokens[a.end].text if a.end < len(doc.tokens) else ""
                assert "(" in (before, after)
        uses = expand_abbreviations(doc)
        assert len(uses) == sum(not a.definition for a in doc.abbreviation_spans)
