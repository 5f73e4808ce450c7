"""The PubMed query parser and its translation (no store needed: syntax, errors, MeSH mapping)."""

from __future__ import annotations

import json

import pytest

from ebm.errors import InputError
from ebm.mesh import mesh
from ebm.store.query import BoolOp, Term, parse
from ebm.store.query import translate as store_translate


def translate(query: str, **kw):  # the store's translation with the shipped MeSH 2024 by default
    kw.setdefault("vocabulary", mesh())
    return store_translate(query, **kw)


def show(node: object) -> str:
    """A compact rendering of a syntax tree: (op item item ...) / text[field]."""
    if isinstance(node, Term):
        return f"{node.text}[{node.field}{'' if node.explode else ':noexp'}]"
    assert isinstance(node, BoolOp)
    return f"({node.op} {' '.join(show(x) for x in node.items)})"


def test_operators_apply_left_to_right_like_pubmed() -> None:
    assert show(parse("a OR b AND c")) == "(AND (OR a[tw] b[tw]) c[tw])"
    assert show(parse("a OR (b AND c)")) == "(OR a[tw] (AND b[tw] c[tw]))"
    assert show(parse("a NOT b OR c")) == "(OR (NOT a[tw] b[tw]) c[tw])"
    # a chain of one operator is one node; NOT's later items are all excluded
    assert show(parse("a OR b OR (c OR d)")) == "(OR a[tw] b[tw] c[tw] d[tw])"
    assert show(parse("a NOT b NOT c")) == "(NOT a[tw] b[tw] c[tw])"
    assert show(parse("a NOT (b NOT c)")) == "(NOT a[tw] (NOT b[tw] c[tw]))"


def test_adjacent_terms_are_anded_and_and_not_means_not() -> None:
    assert show(parse("febrile seizures")) == "(AND febrile[tw] seizures[tw])"
    assert show(parse("asthma AND NOT children")) == "(NOT asthma[tw] children[tw])"


def test_unquoted_words_before_a_tag_form_one_term() -> None:
    node = parse("randomized controlled trial[Publication Type] AND acute appendicitis")
    assert show(node) == "(AND randomized controlled trial[pt] acute[tw] appendicitis[tw])"


def test_quoted_phrase_takes_the_tag_and_words_before_it_stay_untagged() -> None:
    assert show(parse('aspirin "myocardial infarction"[ti]')) == "(AND aspirin[tw] myocardial infarction[ti])"


def test_long_and_short_field_tags() -> None:
    node = parse(
        "a[Title/Abstract] b[MeSH Terms] c[MeSH:noexp] d[Text Word] e[majr] f[pt] english[la] "
        "2000:2010[dp] 1[pmid] hasabstract AND g[ti] h[Subheading]"
    )
    fields = []

    def walk(n: object) -> None:
        if isinstance(n, Term):
            fields.append(n.field + ("" if n.explode else ":noexp"))
        else:
            assert isinstance(n, BoolOp)
            for x in n.items:
                walk(x)

    walk(node)
    assert fields == ["tiab", "mh", "mh:noexp", "tw", "majr", "pt", "la", "dp", "pmid", "sb", "ti", "sh"]


def test_the_clinical_queries_filters_translate(shared) -> None:
    """Every nbk3827 Clinical Queries filter string is accepted (as ebm ask will send them)."""
    lines = (shared / "clinical-queries" / "pubmed_clinical_queries_filters.tsv").read_text().splitlines()
    rows = [line.split("\t") for line in lines[1:]]
    filters = [row[3] for row in rows if row[2] == "nbk3827_copy"]
    assert len(filters) == 10
    for f in filters:
        q = translate(f)
        assert q.sql.startswith(("SELECT", "WITH"))


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("smith[au] AND asthma", ["[au]", "position 6"]),
        ("asthma AND jama[ta]", ["[ta]", "position 16"]),
        ("(asthma OR wheeze", ["'('", "position 1", "never closed"]),
        ("asthma) OR wheeze", ["')'", "position 7", "no matching"]),
        ("asthma AND", ["operator AND", "position 8", "no term after"]),
        ("OR asthma", ["operator OR", "position 1", "no term before"]),
        ("asthma AND OR wheeze", ["operator AND", "operator OR", "position 12"]),
        ('"febrile seizures AND x', ["unterminated quote", "position 1"]),
        ("asthma[tiab", ["'['", "position 7", "never closed"]),
        ("asthma] x", ["']'", "position 7"]),
        ("asthma AND ()", ["empty parentheses", "position 12"]),
        ("[ti] asthma", ["[ti]", "position 1", "no term before"]),
        ('"breast canc*"[tiab]', ["wildcard", "breast canc*", "position 1"]),
        ("ran*[tiab]", ["ran*", "at least 4", "position 1"]),
        ("asth*ma", ["wildcard", "asth*ma", "position 1"]),
        ("x AND headache disorderz[mh]", ["headache disorderz", "not a MeSH heading", "position 7"]),
        ("asthma AND 20x0[dp]", ["20x0", "not a publication date", "position 12"]),
        ("2010:2000[dp]", ["2010:2000", "ends before it starts"]),
        ("asthma AND klingon[la]", ["klingon", "unknown language", "position 12"]),
        ("jsubsetaim[text]", ["jsubsetaim", "not supported", "hasabstract"]),
        ("aspirin/therap*[mh]", ["wildcard", "therap*"]),
        ("banana split[pt]", ["banana split", "not a publication type"]),
        ("abc[pmid]", ["abc", "not a PMID"]),
        ("   ", ["empty query"]),
        ("asthma AND -", ["'-'", "no searchable words", "position 12"]),
    ],
)
def test_unsupported_queries_name_the_part_and_position(query: str, expected: list[str]) -> None:
    with pytest.raises(InputError) as err:
        translate(query)
    for part in expected:
        assert part in str(err.value), (query, str(err.value))


def test_mesh_term_maps_entry_terms_and_explodes_down_the_tree() -> None:
    q = translate("heart attack[mh]")
    mi = mesh().by_name("Myocardial Infarction")
    assert q.translation.startswith('"Myocardial Infarction"[mh]')
    (uis,) = [json.loads(p) for p in q.params if isinstance(p, str) and p.startswith("[")]
    assert set(uis) == mesh().explode(mi.ui) and len(uis) > 1
    q = translate("heart attack[mh:noexp]")
    (uis,) = [json.loads(p) for p in q.params if isinstance(p, str) and p.startswith("[")]
    assert uis == [mi.ui]


def test_mesh_names_with_commas_written_loosely_resolve() -> None:
    assert (
        translate("diagnosis,differential[MeSH:noexp]").translation == '"Diagnosis, Differential"[mh:noexp]'
    )


def test_mesh_truncation_takes_every_descriptor_with_the_prefix() -> None:
    q = translate("risk*[MeSH:noexp]")
    (uis,) = [json.loads(p) for p in q.params if isinstance(p, str) and p.startswith("[")]
    names = {mesh().get(u).name for u in uis}
    assert {"Risk", "Risk Factors", "Risk Assessment"} <= names
    assert all(n.casefold().startswith("risk") for n in names)


def test_publication_types_explode_down_the_v_tree() -> None:
    q = translate("clinical trial[pt]")
    params = [json.loads(p) for p in q.params if isinstance(p, str) and p.startswith("[")]
    assert "D016449" in params[0]  # Randomized Controlled Trial, under Clinical Trial
    assert "Randomized Controlled Trial" in params[1]
    q = translate("clinical trial[pt:noexp]")
    assert json.loads(q.params[0]) == ["D016430"]


def test_rank_expression_keeps_positive_text_terms_only() -> None:
    q = translate('"febrile" AND ibuprofen[tiab] NOT aspirin AND fever[ti] AND humans[mh]')
    assert q.rank_match == '("febrile") OR ("ibuprofen") OR (title : "fever")'
    assert translate("humans[mh] AND 2000:2010[dp]").rank_match is None


def test_translation_reads_like_pubmed_search_details() -> None:
    q = translate('(asthma OR wheeze) AND "body mass index"[tiab] AND 2000:2010[dp] NOT child*')
    assert (
        q.translation
        == '(("asthma"[tw] OR "wheeze"[tw]) AND "body mass index"[tiab] AND 2000:2010[dp]) NOT child*[tw]'
    )


def test_the_store_reads_mesh_names_with_the_vocabulary_it_is_given(tmp_path, shared) -> None:
    """Explicit resources (issue 11): a store given a vocabulary maps [mh] names with it, not
    with a hidden default. The small vocabulary is cut from the shipped MeSH: Fever's subtree."""
    import gzip

    from ebm.medline.reader import read_citations
    from ebm.mesh import MeshVocabulary, package_data
    from ebm.store import MedlineStore

    full = mesh()
    keep = full.explode(full.by_name("Fever").ui)
    out = tmp_path / "mesh"
    out.mkdir()
    for name in ("descriptors.tsv.gz", "terms.tsv.gz", "pharm_actions.tsv.gz"):
        with gzip.open(package_data("mesh") / name, "rt", encoding="utf-8") as src:
            rows = [line for line in src if line.split("\t", 1)[0] in keep]
        with gzip.open(out / name, "wt", encoding="utf-8") as dst:
            dst.writelines(rows)
    small = MeshVocabulary(out)
    assert len(small) == len(keep) < 10
    with MedlineStore(tmp_path / "s.sqlite", vocabulary=small) as store:
        store.ingest(read_citations(shared / "medline" / "medsamp2006.xml"))
        assert store.vocabulary is small
        assert store.translate("pyrexia[mh]").translation.startswith('"Fever"[mh]')  # an entry term
        with pytest.raises(InputError, match="'Asthma'\\[mh\\] at position 1 is not a MeSH heading"):
            store.translate("Asthma[mh]")  # in MeSH 2024, not in this vocabulary
    assert translate("Asthma[mh]", vocabulary=full).translation.startswith('"Asthma"[mh]')
