"""``ebm ask`` and ``ebm explain``: answers to a PICO question, and the reasons behind one score.

ebm ask --frame questions/quinine_leg_cramps.yaml [--top 10] [--format text|json|trec]
ebm ask --task therapy --problem "leg cramps" --intervention quinine --population "young adult"
ebm explain 9505772 --frame FRAME.yaml [--rules DIR]

``--rules DIR`` runs with an edited copy of the rule tables (``ebm rules copy DIR``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from pathlib import Path
from typing import TextIO

from ebm.errors import InputError
from ebm.scoring.rankers import ALIASES, DEFAULT_RANKER, RANKERS, choices_help
from ebm.scoring.topical import PARTS as MATCH_PARTS

FORMATS = ("text", "json", "trec")
DEFAULT_TOP = 10


def _frame_arguments(p: argparse.ArgumentParser, *, several: bool) -> None:
    g = p.add_argument_group("the question (a frame file, or its slots as options)")
    if several:
        g.add_argument(
            "--frame",
            action="append",
            type=Path,
            metavar="FILE",
            help="a frame (.yaml/.json), or a directory of frames; may be repeated",
        )
    else:
        g.add_argument("--frame", type=Path, metavar="FILE", help="a frame file (.yaml or .json)")
    g.add_argument(
        "--task", help="therapy, prevention, differential diagnosis, diagnostic test, etiology, prognosis"
    )
    g.add_argument("--problem", help="the primary problem")
    g.add_argument("--co-problem", action="append", default=[], metavar="P", help="a co-occurring problem")
    g.add_argument("--population", action="append", default=[], metavar="P", help="the population")
    g.add_argument("--intervention", action="append", default=[], metavar="I", help="an intervention")
    g.add_argument("--comparison", action="append", default=[], metavar="C", help="a comparison")
    g.add_argument("--outcome", help="the outcome (optional)")
    g.add_argument("--question", help="the question in words (used by the term-based reranker)")
    g.add_argument("--id", help="the question's id (the TREC run's qid)")


def _config_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", choices=["local", "pubmed"], default="local", help="where citations come from")
    p.add_argument("--db", type=Path, help="the local store (default: the one in the data directory)")
    p.add_argument("--rules", type=Path, metavar="DIR", help="an edited copy of rules/ (ebm rules copy DIR)")
    p.add_argument(
        "--retrieval", choices=["bm25", "pico"], default="bm25",
        help="bm25: the relaxed query (default); pico: match the frame's concepts against the "
        "stored annotations (ebm corpus annotate) with [problem] [intervention] [population]",
    )  # fmt: skip
    p.add_argument(
        "--weights",
        default="equal",
        metavar="L1,L2",
        help="S_EBM = L1 S_PICO + L2 S_SoE + (1-L1-L2) S_task; 'equal' (1/3 each, default) or "
        "'therapy' (0.38,0.34, the paper's tuned values)",
    )
    p.add_argument("--year", type=int, help="the current year for S_date (default: this year)")
    p.add_argument(
        "--ranker-weights",
        type=Path,
        metavar="FILE",
        help="EBM+ weights (TOML, [weights] feature = weight); default: the shipped, fitted ones",
    )
    p.add_argument("--no-cache", action="store_true", help="annotate every citation again")
    p.add_argument(
        "--deadline",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="give up on a question after this long (searches and fetches; default 60)",
    )


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "ask",
        help="answer a clinical question (PICO frame) from MEDLINE",
        description="Retrieve candidate citations for a PICO frame, score them (EBM+ by default: the "
        "retrieval score, the question's words and MeSH-tree matches of the problem, interventions "
        "and co-occurring problems; or the paper's S_EBM = S_PICO + strength of evidence + task with "
        "--ranker paper-ebm) and show the best as answers: title, the three best outcome sentences, "
        "grade, year, journal, score and every component.",
    )
    p.add_argument(
        "text",
        nargs="?",
        metavar="QUESTION",
        help='the question in plain words ("leg cramps quinine"); flags set single slots over it',
    )
    _frame_arguments(p, several=True)
    _config_arguments(p)
    p.add_argument("--top", type=int, help=f"answers to show (default {DEFAULT_TOP}; trec: all candidates)")
    p.add_argument("--candidates", type=int, default=50, help="citations to retrieve and rerank (default 50)")
    p.add_argument(
        "--min-hits",
        type=int,
        help="relax the query while fewer citations match (default: --candidates)",
    )
    p.add_argument(
        "--ranker",
        choices=[*RANKERS, *ALIASES],
        default=DEFAULT_RANKER,
        help=choices_help(),
    )
    p.add_argument("--alpha", type=float, default=0.8, help="weight of the EBM score in combo (default 0.8)")
    p.add_argument("--format", choices=FORMATS, default="text", help="text (default), json or a TREC run")
    p.add_argument("--explain", action="store_true", help="json: add every rule and extractor decision")
    p.add_argument(
        "--bottom-line-top",
        type=int,
        default=10,
        metavar="N",
        help="answers the bottom line reads (therapy and prevention questions; default 10)",
    )
    p.set_defaults(func=run_ask)

    e = subparsers.add_parser(
        "explain",
        help="every rule and extractor decision behind one citation's score",
        description="Score one citation for a frame and show every decision that contributed: problem "
        "match, each population/intervention concept, the outcome sentence, journal, study type, "
        "date and each task-indicator rule with its file:line.",
    )
    e.add_argument("pmid", help="the citation's PMID")
    _frame_arguments(e, several=False)
    _config_arguments(e)
    e.add_argument("--format", choices=["text", "json"], default="text")
    e.set_defaults(func=run_explain)


# --- building the frame and the pipeline --------------------------------------------------------


def _frames(args: argparse.Namespace):  # -> list[tuple[Frame, str]]
    from ebm.frame import Frame, frame_from_args, load_frame, load_frames

    given = args.frame if isinstance(args.frame, list) else ([args.frame] if args.frame else [])
    if getattr(args, "text", None) is not None:  # ebm ask "QUESTION" (issue 16)
        from ebm.cli.frame import understood_frame

        if given:
            raise InputError("give either a QUESTION or --frame, not both")
        frame, args.understood_as = understood_frame(args, sys.stderr)
        return [(frame, frame.id or "question")]
    slots = [args.task, args.problem, args.outcome, args.question]
    slots += [args.co_problem, args.population, args.intervention, args.comparison]
    if given and any(slots):
        raise InputError("give either --frame or the frame's slots (--task, --problem, ...), not both")
    if not given:
        if args.task is None:
            raise InputError("give a frame: --frame FILE, or --task T --problem P [--intervention I ...]")
        frame = frame_from_args(
            args.task,
            problem=args.problem,
            co_problems=args.co_problem,
            population=args.population,
            intervention=args.intervention,
            comparison=args.comparison,
            outcome=args.outcome,
            question=args.question,
            id=args.id,
        )
        return [(frame, frame.id or "question")]
    out: list[tuple[Frame, str]] = []
    for path in given:
        if path.is_dir():
            files = sorted(f for f in path.iterdir() if f.suffix.lower() in (".yaml", ".yml", ".json"))
            frames = load_frames(path)
            out.extend((f, f.id or file.stem) for f, file in zip(frames, files, strict=True))
        else:
            f = load_frame(path)
            out.append((f, f.id or path.stem))
    if args.id and len(out) == 1:
        from dataclasses import replace

        out = [(replace(out[0][0], id=args.id), args.id)]
    return out


def _config(args: argparse.Namespace, **extra):  # -> AskConfig
    from ebm.ask import AskConfig
    from ebm.scoring.ebm_score import Weights

    if args.rules is not None and not args.rules.is_dir():
        raise InputError(f"--rules {args.rules}: not a directory (make one with `ebm rules copy DIR`)")
    return AskConfig(
        source=args.source,
        db=args.db,
        rules=args.rules,
        weights=Weights.parse(args.weights),
        ranker_weights=args.ranker_weights,
        year=args.year,
        cache=not args.no_cache,
        deadline_s=args.deadline,
        retrieval=getattr(args, "retrieval", "bm25"),
        **extra,
    )


# --- ask ------------------------------------------------------------------------------------------


def run_ask(args: argparse.Namespace) -> int:
    from ebm.ask import Pipeline

    if args.top is not None and args.top < 1:
        raise InputError(f"--top {args.top}: must be at least 1")
    if args.bottom_line_top < 1:
        raise InputError(f"--bottom-line-top {args.bottom_line_top}: must be at least 1")
    frames = _frames(args)
    config = _config(
        args,
        candidates=args.candidates,
        min_hits=args.min_hits,
        top=args.top or DEFAULT_TOP,
        ranker=args.ranker,
        alpha=args.alpha,
        bottom_line_top=args.bottom_line_top,
    )
    understood = getattr(args, "understood_as", None)  # set when the question came as words
    results = []
    with Pipeline(config) as pipeline:
        for frame, qid in frames:
            result = pipeline.ask(frame)
            if understood is not None:
                from dataclasses import replace

                result = replace(result, understood_as=understood)
            results.append((qid, result))
            if args.format == "text":
                if len(results) > 1:
                    print("=" * _width())
                print_text(result, args.top or DEFAULT_TOP, sys.stdout)
    if args.format == "json":
        docs = [r.to_dict(top=args.top or DEFAULT_TOP, explanation=args.explain) for _, r in results]
        data = docs[0] if len(docs) == 1 else docs
        json.dump(data, sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)  # standard JSON only
        print()
    elif args.format == "trec":
        sys.stdout.write(trec_run(results, config.ranker, args.top))
    return 0


def trec_run(results, ranker: str, top: int | None) -> str:  # list[tuple[str, AskResult]]
    """The answers as a TREC run in the order shown: through the evaluation's writer, with scores
    made strictly decreasing down each list so that a reader (trec_eval, ``ebm eval``) ranks them
    as shown, ties included."""
    from ebm.evaluation.trec import format_run, run_from_ranked

    ranked: dict[str, list[tuple[str, float]]] = {}
    for qid, r in results:
        if qid in ranked:
            raise InputError(f"question id {qid!r} given twice: a TREC run needs one list per question")
        ranked[qid] = [(a.pmid, a.score) for a in (r.answers[:top] if top else r.answers)]
    tag = ranker if ranker.startswith("ebm") else f"ebm-{ranker}"
    return format_run(run_from_ranked(tag, ranked), tag)


def _width() -> int:
    return max(60, min(110, shutil.get_terminal_size((100, 24)).columns))


def _wrap(text: str, indent: str, width: int) -> str:
    return textwrap.fill(" ".join(text.split()), width=width, initial_indent=indent, subsequent_indent=indent)


def _g(x: float) -> str:
    return f"{x:.3g}" if abs(x) >= 0.001 or x == 0 else f"{x:.1e}"


def components_line(answer) -> str:  # Answer -> str
    e = answer.ebm
    p, s, t = e.pico, e.soe, e.task
    pico = (
        f"PICO {p.total:.2f} (problem {_g(p.problem + p.co_problems)}, population {_g(p.population)}, "
        f"intervention {_g(p.intervention)}, outcome {p.outcome:.2f})"
    )
    soe = f"SoE {s.total:.2f} (journal {_g(s.journal)}, study {_g(s.study)}, date {s.date:.2f})"
    return f"{pico} · {soe} · task {t.total:.2f}"


def match_line(answer) -> str | None:  # Answer -> str
    m = answer.match
    if m is None:
        return None
    parts = ", ".join(f"{name.replace('_', '-')} {m.value(name):.2f}" for name in MATCH_PARTS)
    lexical = f" · lexical {answer.lexical.score:.2f}" if answer.lexical is not None else ""
    return f"match ({parts}){lexical}"


def ranking_line(answer) -> str | None:  # Answer -> str
    """What each feature added to an EBM+ score (the non-zero ones)."""
    if answer.ranker != "ebm-plus" or not answer.ranking:
        return None
    parts = [f"{name.replace('_', '-')} {v:+.2f}" for name, v in answer.ranking.items() if v]
    return "EBM+ = " + (" ".join(parts) if parts else "0")


def finding_text(f, frame) -> str:  # (Finding, Frame) -> str
    """``temperature: lower with ibuprofen than acetaminophen (significant, 0.62): "..."``"""
    from ebm.bottom_line import direction_text

    what = direction_text(f.direction, f.outcome, ", ".join(frame.intervention), ", ".join(frame.comparison))
    sig = "significant" if f.significant else "not significant"
    return f"{what} ({sig}; confidence {f.confidence:.2f}): {f.sentence}"


def print_text(result, top: int, out: TextIO) -> None:  # AskResult
    width = _width()
    frame = result.frame
    r = result.retrieval
    print(_wrap(frame.question, "", width) if frame.question else frame.describe(), file=out)
    if frame.question:
        print(textwrap.indent(frame.describe(), "  "), file=out)
    relax = f"; relaxed: {', '.join(r.relaxations)}" if r.relaxations else ""
    print(f"\nQuery ({r.result.count} hits{relax}):", file=out)
    print(_wrap(r.query, "  ", width), file=out)
    for note in r.notes:  # a slot with nothing searchable: said, never dropped silently
        print(_wrap(f"note: {note}", "  ", width), file=out)
    n = len(result.answers)
    if not n:
        print("\nNo citations found.", file=out)
        return
    if result.bottom_line is not None:  # above the list (issue 14)
        print(file=out)
        for text in result.bottom_line.render_text().splitlines():
            print(_wrap(text, "  " if text.startswith(" ") else "", width), file=out)
    cfg = result.answers[0]
    print(f"\n{min(top, n)} of {n} candidates, ranked by {cfg.ranker}:", file=out)
    print(_wrap(cfg.ranker_description, "  ", width), file=out)
    if result.missing:
        print(
            f"({len(result.missing)} retrieved PMIDs could not be fetched: {' '.join(result.missing)})",
            file=out,
        )
    for note in result.skipped:  # a citation the pipeline cannot process: left out, said so
        print(_wrap(f"note: {note}", "  ", width), file=out)
    for a in result.top(top):
        print(file=out)
        head = (
            f"{a.rank}. score {a.score:.3f}   S_EBM {a.ebm.total:.3f}   term {a.term.score:.2f}   "
            f"retrieved #{a.retrieval_rank}"
        )
        print(head, file=out)
        for text in (ranking_line(a), match_line(a), components_line(a)):
            if text:
                print(_wrap(text, "   ", width), file=out)
        facts = [
            a.evidence_line or (f"grade {a.grade}" if a.grade else "grade unknown"),
            a.study_class or "study type unknown",
            str(a.year) if a.year else "year unknown",
            a.journal or "journal unknown",
            f"PMID {a.pmid}",
        ]
        print(_wrap(" · ".join(facts), "   ", width), file=out)
        print(_wrap(a.title or "(no title)", "   ", width), file=out)
        for f in a.findings:  # what it found for the question first, then the outcome sentences
            print(
                _wrap(f"* {finding_text(f, result.frame)}", "     ", width).replace("     *", "   *", 1),
                file=out,
            )
        for o in a.outcomes:
            print(
                _wrap(f"- {o.text} [{o.probability:.2f}]", "     ", width).replace("     -", "   -", 1),
                file=out,
            )


# --- explain ----------------------------------------------------------------------------------------


def run_explain(args: argparse.Namespace) -> int:
    from ebm.ask import Pipeline

    ((frame, _),) = _frames(args)
    with Pipeline(_config(args)) as pipeline:
        explanation = pipeline.explain(args.pmid, frame)
    if args.format == "json":
        json.dump(explanation.to_dict(), sys.stdout, indent=2, ensure_ascii=False, allow_nan=False)
        print()
    else:
        print_explanation(explanation, sys.stdout)
    return 0


def _short(where: str) -> str:
    """A rule file path relative to the working directory when it is below it."""
    try:
        return str(Path(where).relative_to(Path.cwd()))
    except ValueError:
        return where


def print_explanation(x, out: TextIO) -> None:  # Explanation
    width = _width()
    a = x.annotation
    cit = a.citation
    ans = x.answer

    def line(text: str, indent: str = "") -> None:
        print(_wrap(text, indent, width), file=out)

    line(f"PMID {cit.pmid}: {cit.title or '(no title)'}")
    facts = [ans.journal or "journal unknown", str(ans.year) if ans.year else "year unknown"]
    facts.append(ans.evidence_line or (f"grade {ans.grade}" if ans.grade else "grade unknown"))
    facts.append(ans.study_class or "study type unknown")
    line(" · ".join(facts), "  ")
    print(f"\nFrame ({x.frame.task.value}):", file=out)
    for name in ("problem", "co_problems", "population", "intervention", "comparison", "outcome"):
        for v in x.concepts.slot(name):
            found = ", ".join(f"{c.label()} [{'/'.join(c.groups)}]" for c in v.concepts) or "no concept"
            line(f"{name.replace('_', '-')} {v.value!r} -> {found}", "  ")
    print("\nExtracted from the citation:", file=out)
    if a.primary_problem:
        p = a.primary_problem
        line(
            f"primary problem {p.text!r} = {', '.join(p.names)} (score {p.score:.2f}): "
            f"{'; '.join(p.evidence)}",
            "  ",
        )
        others = ", ".join(f"{c.text!r}" for c in a.co_problems[:5])
        if others:
            line(f"other problems: {others}", "  ")
    else:
        line("no problem found", "  ")
    if a.population:
        p = a.population[0]
        line(f"population {p.text!r} ({', '.join(p.names) or 'no concept'}): {'; '.join(p.evidence)}", "  ")
    else:
        line("no population found", "  ")
    if a.interventions:
        items = ", ".join(f"{c.text!r} = {', '.join(c.names)} ({c.score:.2f})" for c in a.interventions[:6])
        line(f"interventions (best first): {items}", "  ")
    else:
        line("no intervention found", "  ")
    if x.frame.intervention:
        if not ans.findings:
            line("findings for the question: none (no sentence reports the frame's comparison)", "  ")
        for f in ans.findings:  # issue 14: what it found for the frame, before the outcome sentences
            line(f"finding (chars {f.start}-{f.end}): {finding_text(f, x.frame)}", "  ")
    for o in ans.outcomes:
        line(f"outcome sentence {o.sentence} [{o.probability:.3f}]: {o.text}", "  ")
    e = x.ebm
    groups = [
        (f"S_PICO = {e.pico.total:.3f}", ("problem", "co-problem", "population", "intervention", "outcome")),
        (f"S_SoE = {e.soe.total:.3f}", ("journal", "study", "grade", "date")),
        (f"S_task ({e.task.task}) = {e.task.total:.3f}", ("task",)),
    ]
    for title, components in groups:
        print(f"\n{title}", file=out)
        decisions = [c for c in e.contributions if c.component in components]
        for c in decisions:
            at = f"  [{_short(c.where)}]" if c.where else ""
            line(f"{c.points:+.3g}  {c.component}: {c.reason}{at}", "  ")
        if not decisions:
            line("(nothing)", "  ")
    print(f"\n{e.formula()}", file=out)
    if x.match is not None:
        print(f"\nS_match (EBM+; each part in [0, 1]) = {x.match.total:.3f}", file=out)
        for c in x.match.contributions:
            at = f"  [{_short(c.where)}]" if c.where else ""
            line(f"{c.points:+.3g}  {c.component}: {c.reason}{at}", "  ")
    if x.plus is not None:
        used = ", ".join(f"{k} {v:g}" for k, v in x.plus.weights.items() if v)
        line(
            f"EBM+ weights ({_short(x.plus.source)}): {used}. EBM+ scales retrieval, lexical, term, "
            "task and SoE over the question's candidates: rank with `ebm ask` to see the score."
        )
    t = x.term
    matched = (
        ", ".join(f"{m.term!r} (sentence {m.sentence}, {m.probability:.2f})" for m in t.matches) or "none"
    )
    print(file=out)
    line(f"S_term = {t.score:.3f}: question terms {', '.join(t.terms) or '(none)'}; matched: {matched}")
    lex = x.answer.lexical
    if lex is not None:
        found = ", ".join(f"{term!r} {v:.2f}" for term, v in lex.matches) or "none"
        line(f"question words in the citation (BM25 parts, this citation alone as the pool): {found}")
