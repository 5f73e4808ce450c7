"""NegEx negation on real sentences from the shared abstracts, and validation of the trigger table."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from ebm.errors import InputError
from ebm.medline.reader import read_citations
from ebm.resources import shipped_rules_dir
from ebm.text.document import Document
from ebm.text.negation import NegationDetector, NegationRules
from ebm.text.negation import load_negation_rules as load_rules_from


def default_pipeline():  # the text pipeline alone: these tests need no concept index
    from ebm.text.pipeline import TextPipeline

    global _PIPELINE
    if _PIPELINE is None:
        _PIPELINE = TextPipeline()
    return _PIPELINE


_PIPELINE = None


def tokenize(text: str) -> list[str]:
    return [t.text for t in default_pipeline().nlp.tokenizer(text) if not t.is_space]


def load_negation_rules(path: Path | None = None) -> NegationRules:
    return load_rules_from(path or shipped_rules_dir() / "negation_triggers.tsv", tokenize)


def default_detector() -> NegationDetector:
    return NegationDetector(load_negation_rules())


def negated(doc: Document, start: int, end: int) -> bool:
    return default_detector().negated(doc, start, end)


def negated_spans(doc: Document, spans: list[tuple[int, int]]) -> list[bool]:
    return default_detector().flag(doc, spans)

PICO_DOCS = ("10194485", "10463847", "10592853", "10940525", "12042231")


@pytest.fixture(scope="module")
def medline(shared: Path) -> dict[str, Document]:
    p = default_pipeline()
    return {c.pmid: p.process(c) for c in read_citations(shared / "medline" / "medline16n0902.xml.gz")}


@pytest.fixture(scope="module")
def pico(shared: Path) -> dict[str, Document]:
    tar = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    wanted = {f"{pmid}.txt" for pmid in PICO_DOCS}
    out: dict[str, Document] = {}
    with tarfile.open(tar) as tf:
        for m in tf:
            name = Path(m.name).name
            if m.isfile() and Path(m.name).parent.name == "docs" and name in wanted:
                f = tf.extractfile(m)
                assert f is not None
                title, _, abstract = f.read().decode("utf-8").strip().partition("\n\n")
                out[name[:-4]] = default_pipeline().process_text(title, abstract, pmid=name[:-4])
    assert len(out) == len(PICO_DOCS)
    return out


def span(doc: Document, phrase: str, within: str) -> tuple[int, int]:
    """Token span of ``phrase`` (first occurrence) in the sentence containing ``within``."""
    sent = next(s for s in doc.sentences if within in s.text)
    a = sent.start + sent.text.index(phrase)
    b = a + len(phrase)
    start = next(i for i, t in enumerate(doc.tokens) if t.start == a)
    end = next(i for i, t in enumerate(doc.tokens) if t.end == b) + 1
    assert doc.span_text(start, end) == phrase
    return start, end


def neg(doc: Document, phrase: str, within: str) -> bool:
    return negated(doc, *span(doc, phrase, within))


def test_pre_triggers_on_real_sentences(medline: dict[str, Document], pico: dict[str, Document]) -> None:
    # "no evidence of"
    assert neg(medline["26702209"], "bending", "The monofil had no evidence of bending")
    assert neg(pico["10463847"], "brain damage", "children with no evidence of brain damage")
    assert not neg(pico["10463847"], "generalised seizures", "children with no evidence of brain damage")
    # "without"
    assert neg(medline["19302341"], "sleep complaints", "women without sleep complaints")
    assert not neg(medline["19302341"], "women", "women without sleep complaints")
    # "was not associated with": the following concepts are negated, the subject is not
    d = medline["26206344"]
    assert neg(d, "implantation", "was not associated with implantation")
    assert neg(d, "clinical pregnancy", "was not associated with implantation")
    assert not neg(d, "meat intake", "was not associated with implantation")
    # "free of"
    assert neg(pico["10940525"], "adult heartworm infection", "dogs free of adult heartworm")


def test_post_trigger_on_real_sentence(pico: dict[str, Document]) -> None:
    d = pico["10194485"]
    assert neg(d, "acute DVT", "acute DVT was excluded")
    assert not neg(d, "subject evaluation", "acute DVT was excluded")


def test_termination_ends_scope(medline: dict[str, Document]) -> None:
    # "... 67 patients without ALK rearrangement but positive for EGFR mutation ..."
    d = medline["21933749"]
    within = "67 patients without ALK rearrangement"
    assert neg(d, "ALK rearrangement", within)
    assert not neg(d, "EGFR mutation", within)
    # "... tumor grade (P = 0.0001), but not urine cytology, predict muscle invasion."
    d = medline["19602546"]
    assert neg(d, "urine cytology", "but not urine cytology")
    assert not neg(d, "tumor grade", "but not urine cytology")


def test_pseudo_triggers_do_not_negate(medline: dict[str, Document], pico: dict[str, Document]) -> None:
    assert not neg(medline["25466483"], "posterior capsule tears", "no significant difference in posterior")
    assert not neg(medline["25395623"], "substrate", "not only present the first substrate")
    assert not neg(pico["12042231"], "suicidal ideation", "There was no increase in suicidal ideation")
    # "could not be ruled out": the difference is possible, not absent
    d = pico["10592853"]
    assert not neg(d, "6-point difference", "could not be ruled out")


def test_window_limits_scope(medline: dict[str, Document]) -> None:
    d = medline["26206344"]
    within = "was not associated with implantation"
    start, end = span(d, "live-birth rates", within)
    # "not associated with implantation , clinical pregnancy , or live-birth": 6 word tokens between
    assert NegationDetector(load_negation_rules(), window=8).negated(d, start, end)
    assert not NegationDetector(load_negation_rules(), window=3).negated(d, start, end)


def test_trigger_for_and_flags(medline: dict[str, Document]) -> None:
    d = medline["26702209"]
    s = span(d, "bending", "The monofil had no evidence of bending")
    trig = default_detector().trigger_for(d, *s)
    assert trig is not None and trig.phrase == "no evidence of" and trig.type == "pre"
    other = span(d, "monofil", "The monofil had no evidence of bending")
    assert negated_spans(d, [s, other]) == [True, False]
    with pytest.raises(ValueError):
        negated(d, 5, 5)


def test_shipped_table_loads_with_all_types() -> None:
    rules = load_negation_rules()
    assert set(rules.phrases.values()) == {"pre", "post", "pseudo", "termination"}
    assert rules.phrases[("no", "evidence", "of")] == "pre"
    assert rules.phrases[("but",)] == "termination"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "# trigger\ttype\tcomment\nno\tpre\nwithout\tbefore\t\n",
            ":3: column 'type': 'before' is not one of",
        ),
        ("no\tpre\tx\textra\n", ":1: 4 cells, at most 3 expected"),
        ("\tpre\n", ":1: column 'trigger' is empty"),
        ("no\tpre\nNo\tpost\n", ":2: trigger 'no' already defined on line 1"),
    ],
)
def test_table_errors_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "neg.tsv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_negation_rules(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_missing_table(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="rule table not found"):
        load_negation_rules(tmp_path / "absent.tsv")
