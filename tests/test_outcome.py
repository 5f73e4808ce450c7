"""Outcome extractor: training data, features, training (naive Bayes, information gain,
stacking), the model file, and the shipped model on held-out EvidenceOutcomes abstracts."""

from __future__ import annotations

import gzip
import json
import time
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import mutual_info_score
from sklearn.naive_bayes import MultinomialNB

from ebm.citation import AbstractSection
from ebm.errors import DataError
from ebm.medline.reader import read_citations
from ebm.text.pipeline import TextPipeline
from extractors.outcome import load_model
from extractors.outcome_features import ngram_features, position_keys, words
from extractors.outcome_training import (
    Example,
    TrainingConfig,
    fit_naive_bayes,
    information_gain,
    round_model,
    train,
)
from tests.conftest import load_script
from tests.tiny import default_cues, default_model, default_pipeline

oc = load_script("outcome_corpus")


@pytest.fixture(scope="module")
def eo(shared: Path) -> list:
    return oc.read_evidence_outcomes(shared)


@pytest.fixture(scope="module")
def pipeline() -> TextPipeline:
    return default_pipeline()


# --- training data -----------------------------------------------------------------------------


def test_evidence_outcomes_read_with_gold_spans_on_their_text(eo: list, shared: Path) -> None:
    assert len(eo) == 640
    assert sum(r.source == "eo140" for r in eo) == 140
    by_pmid = {r.pmid: r for r in eo}
    r = by_pmid["35075109"]
    assert r.title.startswith("Oral ixazomib-dexamethasone vs oral pomalidomide-dexamethasone")
    assert not r.structured
    spans = [r.sections[k].text[a:b] for k, a, b in r.gold_spans]
    assert spans[0] == "Median progression-free survival"
    assert "Quality of life" in spans
    # the copyright notice ("© 2022. The Author(s).") is not abstract text
    assert "©" not in r.sections[-1].text and "Author(s)" not in r.sections[-1].text
    # every gold span of every abstract lies on its own text in the rebuilt sections
    with gzip.open(shared / "pico" / "evidence-outcomes" / "consensus.tar.gz") as _:
        pass
    for rec in eo:
        for k, a, b in rec.gold_spans:
            assert 0 <= a < b <= len(rec.sections[k].text)


def test_structured_abstract_without_blank_lines_keeps_its_sections(eo: list) -> None:
    # 26223345 has no blank line after the title; its labelled sections start at "LABEL : "
    r = {x.pmid: x for x in eo}["26223345"]
    assert r.title.startswith("Randomized, controlled trial of entecavir versus placebo")
    assert [(s.label, s.nlm_category) for s in r.sections] == [
        ("UNLABELLED", "UNASSIGNED"),
        ("CONCLUSIONS", "CONCLUSIONS"),
    ]
    assert r.sections[1].text.startswith("In childhood CHB, entecavir demonstrated superior")
    assert not r.sections[1].text.startswith("CONCLUSIONS")


def test_label_categories() -> None:
    assert oc.nlm_category("FINDINGS") == "RESULTS"
    assert oc.nlm_category("INTERPRETATION") == "CONCLUSIONS"
    assert oc.nlm_category("CONCLUSIONS AND RELEVANCE") == "CONCLUSIONS"
    assert oc.nlm_category("MAIN OUTCOME MEASURES") == "METHODS"
    assert oc.nlm_category("TRIAL REGISTRATION") == "UNASSIGNED"
    assert oc.nlm_category(None) is None


def test_gold_sentences_contain_the_spans(eo: list, pipeline: TextPipeline) -> None:
    r = {x.pmid: x for x in eo}["35075109"]
    p = oc.process(r, pipeline)
    assert len(p.labels) == len(p.document.sentences)
    positive = [s.text for s, v in zip(p.document.sentences, p.labels, strict=True) if v]
    assert positive[0].startswith("Median progression-free survival (mPFS) was 7.1 vs 4.8 months")
    assert any(t.startswith("Quality of life was similar") for t in positive)
    assert p.labels[0] == 0  # the title
    negative = [s.text for s, v in zip(p.document.sentences, p.labels, strict=True) if not v]
    assert any(t.startswith("Multiple myeloma (MM) patients typically receive") for t in negative)


def test_weak_labels_come_from_sections_whose_headings_are_removed(
    shared: Path, pipeline: TextPipeline
) -> None:
    records = oc.read_pubmedqa(shared)
    assert len(records) == 1000
    r = records[0]
    p = oc.process(r, pipeline)
    assert all(s.section_label is None and s.nlm_category is None for s in p.document.sentences)
    last = p.document.sentences[-1]
    assert r.sections[last.section_index].nlm_category == "CONCLUSIONS"
    assert p.labels[-1] == 1
    for s, v in zip(p.document.sentences, p.labels, strict=True):
        assert v == (r.sections[s.section_index].nlm_category in ("RESULTS", "CONCLUSIONS"))
    medline = oc.read_medline_structured(shared)
    assert len(medline) > 150 and all(len(x.sections) > 1 for x in medline)


def test_splits_are_fixed_disjoint_and_by_pmid(eo: list) -> None:
    a = oc.make_splits(eo, 2007)
    b = oc.make_splits(list(reversed(eo)), 2007)
    assert a == b  # independent of order
    ids = [set(a[k]) for k in ("train", "dev", "test")]
    assert not (ids[0] & ids[1]) and not (ids[0] & ids[2]) and not (ids[1] & ids[2])
    assert sum(len(x) for x in ids) == 640
    assert 0.5 < len(ids[0]) / 640 < 0.7 and 0.12 < len(ids[2]) / 640 < 0.28
    assert oc.make_splits(eo, 1) != a  # the seed matters


# --- features ----------------------------------------------------------------------------------


def test_position_keys_structured_and_unstructured(shared: Path, pipeline: TextPipeline) -> None:
    cits = {c.pmid: c for c in read_citations(shared / "medline" / "medline16n0902.xml.gz")}
    structured = next(c for c in cits.values() if c.abstract and len(c.abstract) >= 4)
    doc = pipeline.process(structured)
    keys = position_keys(doc)
    assert keys[0] == "T"
    for s, k in zip(doc.sentences[1:], keys[1:], strict=True):
        assert k.startswith(f"S:{s.nlm_category}:")
    # an unstructured abstract counts from the end
    plain = pipeline.process_text(structured.title, " ".join(s.text for s in structured.abstract))
    ukeys = position_keys(plain)
    assert ukeys[-1] == "U:e1" and ukeys[-2] == "U:e2" and ukeys[1].startswith(("U:q", "U:e"))


# --- training ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_examples(eo: list, shared: Path, pipeline: TextPipeline) -> list[Example]:
    """30 gold abstracts of the training split and 30 weakly labelled PubMedQA abstracts."""
    splits = oc.make_splits(eo, 2007)
    train_ids = set(splits["train"])
    gold = [r for r in eo if r.pmid in train_ids][:30]
    weak = oc.read_pubmedqa(shared)[:30]
    return [Example(p.document, p.labels, p.record.gold) for p in oc.process_all(gold + weak, pipeline)]


def test_naive_bayes_weights_reproduce_scikit_learn(small_examples: list[Example]) -> None:
    docs = [words(s.text) for ex in small_examples for s in ex.doc.sentences]
    y = [v for ex in small_examples for v in ex.labels]
    nb = fit_naive_bayes(docs, y, alpha=1.0, min_df=2)
    vec = CountVectorizer(analyzer=lambda x: x, min_df=2, lowercase=False)
    X = vec.fit_transform(docs)
    ref = MultinomialNB(alpha=1.0).fit(X, y).predict_proba(X)[:, 1]
    ours = np.array([nb.probability(d) for d in docs])
    assert np.allclose(ours, ref, atol=1e-9)
    assert len(nb.weights) == len(vec.vocabulary_)


def test_fast_ngram_scoring_equals_the_feature_list(small_examples: list[Example]) -> None:
    model = default_model()
    for ex in small_examples[:20]:
        for s in ex.doc.sentences:
            toks = words(s.text)
            assert model.ngram.ngram_probability(toks) == pytest.approx(
                model.ngram.probability(ngram_features(toks)), abs=1e-12
            )


def test_information_gain_is_mutual_information(small_examples: list[Example]) -> None:
    docs = [words(s.text) for ex in small_examples for s in ex.doc.sentences]
    y = np.array([v for ex in small_examples for v in ex.labels])
    vec = CountVectorizer(analyzer=lambda x: x, min_df=3, lowercase=False, binary=True)
    X = vec.fit_transform(docs).tocsr()
    ig, odds = information_gain(X, y)
    names = list(vec.get_feature_names_out())
    for w in ("p", "were", "<num>", "significantly"):
        col = X[:, names.index(w)].toarray().ravel()
        # IG in bits = mutual information in nats / ln 2
        assert ig[names.index(w)] == pytest.approx(mutual_info_score(col, y) / np.log(2), rel=1e-6, abs=1e-9)
    assert odds[names.index("p")] > 1 > odds[names.index("were")]


def test_training_is_reproducible_and_stacks_on_held_out_folds(small_examples: list[Example]) -> None:
    config = TrainingConfig(folds=3, ig_features=300)
    a = train(small_examples, seed=5, config=config, cues=default_cues())
    b = train(small_examples, seed=5, config=config, cues=default_cues())
    c = train(small_examples, seed=6, config=config, cues=default_cues())
    ja = json.dumps(round_model(a.model).to_json(), sort_keys=True)
    assert ja == json.dumps(round_model(b.model).to_json(), sort_keys=True)
    assert a.model.stack.weights != c.model.stack.weights  # other folds, other held-out scores
    # the stacking input holds every gold sentence once, scored by models that never saw it
    n_gold = sum(len(ex.labels) for ex in small_examples if ex.gold)
    assert a.oof_scores.shape == (n_gold, 5)
    assert set(a.model.stack.weights) == {"cues", "unigram", "ngram", "position", "length"}
    # the least-squares weights fit the held-out scores better than any single classifier
    X, y = a.oof_scores, a.oof_labels
    w = np.array([a.model.stack.weights[n] for n in a.names])
    resid = np.sum((X @ w + a.model.stack.intercept - y) ** 2)
    for j in range(X.shape[1]):
        A = np.c_[X[:, j], np.ones(len(y))]
        single = np.linalg.lstsq(A, y, rcond=None)[1]
        assert resid <= float(single[0]) + 1e-9 if len(single) else True
    # n-gram features are positive predictors only
    assert all(a.selection.odds_ratio[f] > 1 for f in a.selection.features)


def test_model_file_round_trip(small_examples: list[Example], tmp_path: Path) -> None:
    config = TrainingConfig(folds=3, ig_features=300)
    model = round_model(train(small_examples, seed=5, config=config, cues=default_cues()).model)
    path = tmp_path / "m.json.gz"
    model.save(path)
    again = load_model(path)
    doc = small_examples[0].doc
    # same scores (up to float summation order: the file sorts its keys)
    assert [c.probability for c in again.score(doc, default_cues())] == pytest.approx(
        [c.probability for c in model.score(doc, default_cues())]
    )
    model.save(tmp_path / "m2.json.gz")
    assert path.read_bytes() == (tmp_path / "m2.json.gz").read_bytes()


def test_bad_model_files_are_data_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="missing"):
        load_model(tmp_path / "absent.json.gz")
    junk = tmp_path / "junk.json.gz"
    junk.write_bytes(b"not gzip")
    with pytest.raises(DataError, match="junk.json.gz"):
        load_model(junk)
    data = default_model().to_json()
    for mutate, message in (
        (lambda d: d.update(format="other"), "not an outcome model"),
        (lambda d: d.update(version=99), "version 99"),
        (lambda d: d["classifiers"].pop("unigram"), "malformed"),
        (lambda d: d["stack"]["weights"].update(colour=1.0), "malformed"),
    ):
        d = json.loads(json.dumps(data))
        mutate(d)
        path = tmp_path / "bad.json.gz"
        path.write_bytes(gzip.compress(json.dumps(d).encode()))
        with pytest.raises(DataError, match=message):
            load_model(path)


# --- the shipped model -------------------------------------------------------------------------


def test_shipped_model_metadata_and_size() -> None:
    from ebm.paths import package_data

    path = package_data("models/outcome.json.gz")
    assert path.stat().st_size < 300_000
    t0 = time.perf_counter()
    model = load_model(path)
    assert time.perf_counter() - t0 < 2.0  # generous: the benchmark measures it properly
    meta = model.meta
    assert meta["fit_on"] == ["train", "dev"]
    assert set(meta["splits"]) == {"train", "dev", "test"}
    assert len(meta["splits"]["test"]) > 100


def test_shipped_model_beats_last_sentences_on_held_out_abstracts(eo: list, pipeline: TextPipeline) -> None:
    """The paper's protocol on the test split the shipped model never saw."""
    model = default_model()
    test_ids = set(model.meta["splits"]["test"])
    assert test_ids == set(oc.make_splits(eo, model.meta["seed"])["test"])
    hits = {2: 0, 3: 0}
    base = {2: 0, 3: 0}
    n = 0
    for r in eo:
        if r.pmid not in test_ids:
            continue
        p = oc.process(r, pipeline)
        gold = {i for i, v in enumerate(p.labels) if v}
        if not gold:
            continue
        n += 1
        ranked = [c.sentence for c in model.score(p.document, default_cues())]
        for k in (2, 3):
            hits[k] += bool(gold & set(ranked[:k]))
            base[k] += bool(gold & set(range(len(p.labels) - k, len(p.labels))))
    assert n > 100
    assert hits[3] / n >= 0.90
    assert hits[3] > base[3] and hits[2] > base[2]


def test_candidates_carry_span_probability_and_evidence(pipeline: TextPipeline) -> None:
    doc = pipeline.process_text(
        "Oral ixazomib-dexamethasone vs oral pomalidomide-dexamethasone for lenalidomide-refractory multiple "
        "myeloma",
        [
            AbstractSection(
                "Patients were randomized 3:2 to ixazomib-dexamethasone (n = 73) or "
                "pomalidomide-dexamethasone (n = 49) until progression/toxicity.",
                "METHODS",
                "METHODS",
            ),
            AbstractSection(
                "Median progression-free survival (mPFS) was 7.1 vs 4.8 months with ixa-dex vs pom-dex "
                "(HR 0.847, 95% CI 0.535-1.341, P = 0.477). Quality of life was similar between arms.",
                "RESULTS",
                "RESULTS",
            ),
        ],
    )
    cands = default_model().score(doc, default_cues())
    assert len(cands) == len(doc.sentences)
    assert [c.evidence.stacked for c in cands] == sorted((c.evidence.stacked for c in cands), reverse=True)
    # the two results sentences first, the title and the design sentence after them
    assert {c.sentence for c in cands[:2]} == {2, 3}
    assert all(c.probability < 0.2 for c in cands[2:])
    top = next(c for c in cands if c.sentence == 2)
    assert top.text.startswith("Median progression-free survival")
    assert doc.text[top.start : top.end] == top.text
    assert 0.0 <= top.probability <= 1.0
    ev = top.evidence
    assert set(ev.scores) == {"cues", "unigram", "ngram", "position", "length"}
    assert ev.position == "S:RESULTS:first"
    assert any(m.text == "P = 0.477" for m in ev.cues)
    assert ev.stacked == pytest.approx(
        ev.weights["intercept"] + sum(ev.weights[k] * v for k, v in ev.scores.items())
    )
    d = top.to_dict()
    assert d["evidence"]["position"] == "S:RESULTS:first" and d["text"] == top.text
