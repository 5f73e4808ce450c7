"""Blinded answer assessment: sheets from two runs, the key, scoring filled sheets."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import ir_measures
import pytest

from ebm.cli import main
from ebm.errors import DataError, InputError
from ebm.evaluation import assess
from ebm.evaluation.tasks import read_frames
from ebm.evaluation.trec import read_qrels, read_run, run_from_rankings

FIXTURES = Path(__file__).parent / "fixtures" / "eval"

# Fixture judgements (top 2): Q1 A d4 d2 / B d9 d1; Q2 A e3 e1 / B e3 e2; Q3 A - / B f1; Q4 A g2 g1 / B g1.
FIXTURE_JUDGEMENTS = {
    "d4": "-",
    "d2": "check",
    "d9": "+",
    "d1": "+",
    "e3": "+",
    "e1": "-",
    "e2": "✓",
    "f1": "+",
    "g2": "−",
    "g1": "minus",
}


def fixture_sheet(seed: int = 0, answers=None, lookup=None) -> assess.Sheet:
    return assess.make_sheet(
        read_run(FIXTURES / "run_a.run"),
        read_run(FIXTURES / "run_b.run"),
        read_frames(FIXTURES / "frames"),
        top=2,
        seed=seed,
        answers=answers,
        lookup=lookup,
    )


def fill(csv_text: str, verdicts: dict[str, str]) -> str:
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    for row in rows:
        row["judgement"] = verdicts[row["pmid"]]
        writer.writerow(row)
    return out.getvalue()


def test_merge_suppresses_duplicates_and_keeps_the_key() -> None:
    sheet = fixture_sheet()
    by_q = {q.qid: q for q in sheet.questions}
    assert sorted(by_q) == ["Q1", "Q2", "Q3", "Q4"]
    assert sorted(i.pmid for i in by_q["Q1"].items) == ["d1", "d2", "d4", "d9"]
    assert sorted(i.pmid for i in by_q["Q2"].items) == ["e1", "e2", "e3"]  # e3 from both, once
    e3 = next(i for i in by_q["Q2"].items if i.pmid == "e3")
    assert e3.systems == ("A", "B")
    assert by_q["Q3"].answers == {"A": [], "B": ["f1"]}
    assert [i.item_id for i in by_q["Q1"].items] == ["Q1-1", "Q1-2", "Q1-3", "Q1-4"]
    assert any("Q5" in w for w in sheet.warnings)  # in run_a, no frame
    assert any("question Q3: system A" in w for w in sheet.warnings)
    key = assess.key_dict(sheet)
    assert key["questions"]["Q2"]["answers"] == {"A": ["e3", "e1"], "B": ["e3", "e2"]}
    assert key["systems"]["A"]["name"] == "run_a"


def test_order_is_seeded(shared: Path) -> None:
    bench = shared / "bench"
    pool = read_run(bench / "pools.run")
    reverse = run_from_rankings("reverse", {q: pool.ranking(q)[::-1] for q in pool.results})
    frames = read_frames(bench / "frames")
    orders = {}
    for seed in (1, 1, 2):
        sheet = assess.make_sheet(pool, reverse, frames, top=5, seed=seed)
        orders.setdefault(seed, []).append([[i.pmid for i in q.items] for q in sheet.questions])
    assert orders[1][0] == orders[1][1]
    assert orders[1][0] != orders[2][0]
    sheet = assess.make_sheet(pool, reverse, frames, top=5, seed=1)
    # The top 5 and the bottom 5 of a pool overlap only in pools of fewer than 10 candidates.
    assert [len(q.items) for q in sheet.questions] == [
        min(10, len(pool.results[q.qid])) for q in sheet.questions
    ]
    # Shuffled: neither system's answers sit in a block at the top of every question.
    first_five_a = [sum("A" in i.systems for i in q.items[:5]) for q in sheet.questions]
    assert set(first_five_a) != {5}


def test_sheet_is_blind_and_escaped(tmp_path: Path) -> None:
    answers = (
        assess.read_answers(FIXTURES / "answers_a"),
        assess.read_answers(FIXTURES / "answers_b" / "all.json"),
    )
    sheet = fixture_sheet(answers=answers)
    paths = assess.write_sheet(sheet, tmp_path / "out")
    assert [p.name for p in paths] == ["sheet.html", "sheet.csv", "key.json"]
    page = paths[0].read_text()
    table = paths[1].read_text()
    for text in (page, table):
        for system in ("run_a", "run_b", "sysA", "sysB"):
            assert system not in text
    assert "Does &lt;drug&gt; &amp; co. help with fever?" in page and "<drug>" not in page
    assert "Ibuprofen &lt;b&gt;vs&lt;/b&gt; placebo" in page
    assert "Fever fell faster with ibuprofen (p &lt; 0.05)." in page  # outcomes from A's answers
    assert "Combined therapy lowered temperature more." in page  # from B's
    assert "No difference in comfort." in page  # outcome given as {"text": ...}
    assert "2010" not in page and "score" not in page.lower()  # no situational metadata
    assert "Population: children" in page
    rows = list(csv.DictReader(io.StringIO(table)))
    assert list(rows[0]) == list(assess.CSV_COLUMNS)
    assert {r["judgement"] for r in rows} == {""}
    d4 = next(r for r in rows if r["pmid"] == "d4")
    assert d4["title"] == "Ibuprofen <b>vs</b> placebo"  # CSV keeps the text as is
    key = json.loads(paths[2].read_text())
    assert set(key["items"]) == {r["item"] for r in rows}
    with pytest.raises(InputError, match="would overwrite"):
        assess.write_sheet(sheet, tmp_path / "out")
    assess.write_sheet(sheet, tmp_path / "out", force=True)


def test_cli_make_with_answers(tmp_path: Path, capsys) -> None:
    args = ["assess", "make", str(FIXTURES / "run_a.run"), str(FIXTURES / "run_b.run"), "--top", "2"]
    args += [
        "--frames",
        str(FIXTURES / "frames"),
        "--out",
        str(tmp_path),
        "--key",
        str(tmp_path / "k" / "key.json"),
    ]
    answers = ["--answers", str(FIXTURES / "answers_a"), str(FIXTURES / "answers_b" / "all.json")]
    assert main([*args, *answers]) == 0
    captured = capsys.readouterr()
    assert "Q5" in captured.err  # warned: in run_a, no frame
    assert (tmp_path / "k" / "key.json").is_file() and not (tmp_path / "key.json").exists()
    assert "Combined therapy lowered temperature more." in (tmp_path / "sheet.html").read_text()
    assert main([*args, "--top", "0", "--force"]) == 2
    assert "--top must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # both answers or neither: argparse refuses one
        main([*args, "--answers", str(FIXTURES / "answers_a")])
    assert "expected 2 arguments" in capsys.readouterr().err


def test_store_lookup_with_real_citations(shared: Path) -> None:
    from ebm.medline.bundled import iter_bundled

    bench = shared / "bench"
    pool = read_run(bench / "pools.run")
    wanted = {d for q in ("D02", "T01") for d in pool.ranking(q)[:10]}
    citations = {c.pmid: c for c in iter_bundled() if c.pmid in wanted}

    class Source:  # the CitationSource protocol over real records of the bundled corpus
        name = "local"

        def fetch(self, pmids):
            return [citations[p] for p in pmids if p in citations]

    frames = {q: f for q, f in read_frames(bench / "frames").items() if q in ("D02", "T01")}
    reverse = run_from_rankings("reverse", {q: pool.ranking(q)[:10][::-1] for q in frames})
    sheet = assess.make_sheet(pool, reverse, frames, top=3, lookup=assess.source_lookup(Source()))
    items = [i for q in sheet.questions for i in q.items]
    assert len(items) == 12
    for item in items:
        citation = citations[item.pmid]
        assert item.text.title == citation.title
        sections = citation.abstract or ()
        assert list(item.text.lines) == [f"{s.label}: {s.text}" if s.label else s.text for s in sections]
        assert item.text.kind == ("abstract" if citation.abstract else None)
    assert sum(1 for item in items if item.text.lines) >= 6
    assert not any("PMID only" in w for w in sheet.warnings)


def test_cli_make_with_the_local_store(shared: Path, tmp_path: Path, capsys) -> None:
    pytest.importorskip("ebm.store")  # the store is optional for assessment
    import html

    from ebm.medline.bundled import iter_bundled

    bench = shared / "bench"
    frames = tmp_path / "frames"
    frames.mkdir()
    for qid in ("D02", "E01"):
        shutil.copy(bench / "frames" / f"{qid}.json", frames)
    pool = read_run(bench / "pools.run")
    (tmp_path / "rev.run").write_text(
        "".join(
            f"{q} Q0 {d} {k} {-k} rev\n"
            for q in ("D02", "E01")
            for k, d in enumerate(pool.ranking(q)[::-1], 1)
        )
    )
    out = tmp_path / "sheet"
    args = ["assess", "make", str(bench / "pools.run"), str(tmp_path / "rev.run"), "--top", "2"]
    assert main([*args, "--frames", str(frames), "--out", str(out), "--store"]) == 0
    err = capsys.readouterr().err
    assert "PMID only" not in err
    key = json.loads((out / "key.json").read_text())
    pmids = {i["pmid"] for i in key["items"].values()}
    assert len(pmids) == 8
    citations = {c.pmid: c for c in iter_bundled() if c.pmid in pmids}
    page = (out / "sheet.html").read_text()
    for pmid, citation in citations.items():  # some records of the corpus have no title
        shown = citation.title or citation.abstract[0].text
        assert html.escape(shown) in page, pmid
    assert any(c.title for c in citations.values())
    assert (
        main(
            [*args, "--frames", str(frames), "--out", str(tmp_path / "x"), "--store", str(tmp_path / "no.db")]
        )
        == 2
    )
    assert "no MEDLINE store at" in capsys.readouterr().err


def test_open_store_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ebm.store", None)  # as if the store were not installed
    with pytest.raises(DataError, match=r"local MEDLINE store \(ebm.store\) is not available"):
        assess.open_store(None, None)


def test_score_by_hand(tmp_path: Path) -> None:
    sheet = fixture_sheet(seed=5)
    paths = assess.write_sheet(sheet, tmp_path)
    paths[1].write_text(fill(paths[1].read_text(), FIXTURE_JUDGEMENTS))
    key = assess.read_key(paths[2])
    result = assess.score(assess.read_judgements(paths[1], key), key)
    assert result.qids == ["Q1", "Q2", "Q3", "Q4"]
    # Precision over the top 2, a missing answer counting as not good (Q3: A has none, B one).
    assert result.precision["strict"]["A"].tolist() == [0.0, 0.5, 0.0, 0.0]
    assert result.precision["strict"]["B"].tolist() == [1.0, 0.5, 0.5, 0.0]
    assert result.precision["lenient"]["A"].tolist() == [0.5, 0.5, 0.0, 0.0]
    assert result.precision["lenient"]["B"].tolist() == [1.0, 1.0, 0.5, 0.0]
    assert result.groups() == ["therapy", "diagnosis", "prognosis", "all"]
    mean, change, comparison = result.cell("strict", "B", "all")
    assert mean == pytest.approx(0.5) and change == pytest.approx(0.5 / 0.125 - 1)
    assert comparison.nonzero == 2 and comparison.mark() == "°"
    assert result.cell("strict", "A", "therapy")[0] == pytest.approx(0.25)
    assert result.cell("lenient", "B", "diagnosis")[1] is None  # A's diagnosis precision is 0
    text = result.to_text()
    assert "Strict answer precision" in text and "A: run_a" in text and "0.500 (+300%) °" in text
    data = json.loads(result.to_json())
    assert data["conditions"]["lenient"]["all"]["B"]["precision"] == pytest.approx(0.625)
    assert data["conditions"]["lenient"]["all"]["questions"] == 4


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace("check", "", 1), r"row \d+, column 'judgement': no judgement for Q1-\d"),
        (lambda t: t.replace("check", "maybe", 1), r"row \d+, column 'judgement': 'maybe' for Q1-\d; use"),
        (lambda t: t.replace("Q4-1", "Q9-1", 1), r"row \d+, column 'item': 'Q9-1' is not an item"),
        (lambda t: t + t.splitlines()[1] + "\n", r"row 12, column 'item': Q1-1 already on row 2"),
        (lambda t: "\n".join(t.splitlines()[:-1]) + "\n", r"1 items of the key are not judged: Q4-\d"),
        (lambda t: t.replace("judgement", "verdict", 1), r"row 1: no 'judgement' column"),
        (lambda t: "", r"empty sheet"),
    ],
)
def test_malformed_sheets(tmp_path: Path, edit, message: str) -> None:
    paths = assess.write_sheet(fixture_sheet(), tmp_path)
    filled = fill(paths[1].read_text(), FIXTURE_JUDGEMENTS)
    paths[1].write_text(edit(filled))
    with pytest.raises(InputError, match=message):
        assess.read_judgements(paths[1], assess.read_key(paths[2]))


def test_spreadsheet_csv_with_bom_and_semicolons(tmp_path: Path) -> None:
    paths = assess.write_sheet(fixture_sheet(), tmp_path)
    filled = fill(paths[1].read_text(), FIXTURE_JUDGEMENTS)
    rows = list(csv.reader(io.StringIO(filled)))
    out = io.StringIO()
    csv.writer(out, delimiter=";", lineterminator="\r\n").writerows(rows)
    paths[1].write_bytes(b"\xef\xbb\xbf" + out.getvalue().encode())
    judgements = assess.read_judgements(paths[1], assess.read_key(paths[2]))
    assert sorted(set(judgements.values())) == ["check", "minus", "plus"]


def test_key_errors(tmp_path: Path) -> None:
    (tmp_path / "k.json").write_text('{"format": "something else"}')
    with pytest.raises(InputError, match="not a key written by 'ebm assess make'"):
        assess.read_key(tmp_path / "k.json")
    (tmp_path / "k.json").write_text('{"format": "ebm-assess-key", "version": 1, "top": 5}')
    with pytest.raises(InputError, match="incomplete or damaged"):
        assess.read_key(tmp_path / "k.json")
    with pytest.raises(InputError, match="key file not found"):
        assess.read_key(tmp_path / "none.json")


def test_answers_errors(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text('"text"')
    with pytest.raises(InputError, match="expected an answers document"):
        assess.read_answers(tmp_path / "a.json")
    (tmp_path / "a.json").write_text('{"Q1": {"query": "x"}}')
    with pytest.raises(InputError, match="an answers document needs a 'results' list"):
        assess.read_answers(tmp_path / "a.json")
    (tmp_path / "a.json").write_text('[{"results": [{"pmid": "1"}]}]')
    with pytest.raises(InputError, match=r"no question id \(frame.id\)"):
        assess.read_answers(tmp_path / "a.json")
    (tmp_path / "a.json").write_text('{"frame": {"id": "Q1"}, "results": [{"title": "t"}]}')
    with pytest.raises(InputError, match=r"results\[1\] has no 'pmid'"):
        assess.read_answers(tmp_path / "a.json")


def test_bench_end_to_end_precision_equals_p_at_5(shared: Path, tmp_path: Path, capsys) -> None:
    """Judging every item by its qrels grade (3 '+', 2 'check', else '-') makes strict and lenient
    answer precision P@5 at grades 3 and 2, which ir_measures computes independently."""
    bench = shared / "bench"
    pool = read_run(bench / "pools.run")
    reverse = run_from_rankings("reverse", {q: pool.ranking(q)[::-1] for q in pool.results})
    (tmp_path / "reverse.run").write_text(
        "".join(
            f"{q} Q0 {d} {k} {-k} rev\n" for q in pool.results for k, d in enumerate(reverse.ranking(q), 1)
        )
    )
    out = tmp_path / "sheet"
    runs = [str(bench / "pools.run"), str(tmp_path / "reverse.run")]
    assert (
        main(
            [
                "assess",
                "make",
                *runs,
                "--top",
                "5",
                "--frames",
                str(bench / "frames"),
                "--out",
                str(out),
                "--seed",
                "7",
            ]
        )
        == 0
    )
    assert capsys.readouterr().out.split() == [
        str(out / "sheet.html"),
        str(out / "sheet.csv"),
        str(out / "key.json"),
    ]
    assert main(["assess", "make", *runs, "--frames", str(bench / "frames"), "--out", str(out)]) == 2
    assert "would overwrite" in capsys.readouterr().err

    qrels = read_qrels(bench / "qrels.txt")
    rows = list(csv.DictReader(io.StringIO((out / "sheet.csv").read_text())))
    mark = {3: "+", 2: "check"}
    for row in rows:
        row["judgement"] = mark.get(qrels[row["question"]][row["pmid"]], "-")
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (out / "sheet.csv").write_text(buffer.getvalue())

    assert main(["assess", "score", str(out / "sheet.csv"), str(out / "key.json"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    ir_qrels = list(ir_measures.read_trec_qrels(str(bench / "qrels.txt")))
    for condition, rel in (("strict", 3), ("lenient", 2)):
        for system, path in zip(("A", "B"), runs, strict=True):
            expected = ir_measures.calc_aggregate(
                [ir_measures.P(rel=rel) @ 5], ir_qrels, list(ir_measures.read_trec_run(path))
            )
            got = data["conditions"][condition]["all"][system]["precision"]
            assert got == pytest.approx(next(iter(expected.values()))), (condition, system)
    assert data["conditions"]["lenient"]["all"]["B"]["mark"] == "down1"
    assert main(["assess", "score", str(out / "sheet.csv"), str(out / "key.json")]) == 0
    text = capsys.readouterr().out
    assert "Lenient answer precision" in text and "therapy (9)" in text and "▼" in text
