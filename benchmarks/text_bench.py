"""Speed of the text pipeline (abstracts/s on one core) against references measured in the same run.

Texts: title + abstract of real RCT abstracts (PICO-data docs in ../shared, default 1,000;
``--source bundled`` takes them from the bundled corpus instead).
Measured, each as the best of ``--repeat`` passes after one warm-up pass:

- ``ebm TextPipeline.process_text``: scispacy tokenizer + our splitter + abbreviations + Document
- its parts: tokenizer only, splitter only, abbreviation finder only, negation triggers per sentence
- reference A: ``spacy.blank("en")`` tokenizer + pysbd sentence splitting (what scispacy ships)
- reference B: ``spacy.blank("en")`` with spaCy's rule ``sentencizer``

    python benchmarks/text_bench.py [--n 1000] [--repeat 3] [--source pico|bundled]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_timing import timed  # noqa: E402

from ebm.text.abbreviations import AbbreviationFinder  # noqa: E402
from ebm.text.negation import NegationDetector  # noqa: E402
from ebm.text.pipeline import TextPipeline  # noqa: E402
from ebm.text.sentences import split_spans  # noqa: E402

Doc = tuple[str, str]  # (title, abstract)


def load_docs(shared: Path, n: int) -> list[Doc]:
    tar = shared / "pico" / "pico-data-nguyen2017" / "pico-data-docs-and-annotations.tar.gz"
    docs: list[Doc] = []
    with tarfile.open(tar) as tf:
        for m in tf:
            p = Path(m.name)
            if m.isfile() and p.suffix == ".txt" and p.parent.name == "docs":
                f = tf.extractfile(m)
                assert f is not None
                title, _, abstract = f.read().decode("utf-8", errors="replace").strip().partition("\n\n")
                if abstract.strip():
                    docs.append((title, abstract))
                    if len(docs) >= n:
                        break
    return docs


def load_bundled(n: int) -> list[Doc]:
    from ebm.medline.bundled import iter_bundled

    docs: list[Doc] = []
    for c in iter_bundled():
        if c.has_abstract:
            docs.append((c.title or "", c.abstract_text or ""))
            if len(docs) >= n:
                break
    return docs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--source", choices=("pico", "bundled"), default="pico")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-pysbd", action="store_true", help="skip the (slow) pysbd reference")
    args = ap.parse_args(argv)

    docs = load_docs(args.shared, args.n) if args.source == "pico" else load_bundled(args.n)
    n_chars = sum(len(t) + len(a) for t, a in docs)
    t0 = time.perf_counter()
    pipe = TextPipeline()
    build = time.perf_counter() - t0
    n_tokens = sum(len(pipe.process_text(t, a).tokens) for t, a in docs)
    print(
        f"{len(docs)} abstracts, {n_tokens / len(docs):.0f} tokens and {n_chars / len(docs):.0f} chars each; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs (one used); "
        f"pipeline built in {build:.2f} s"
    )

    nlp = pipe.nlp
    finder = AbbreviationFinder()
    sdocs = {id(d): nlp.make_doc(d[0] + "\n\n" + d[1]) for d in docs}
    identity = list(range(10_000))
    negation = NegationDetector()
    processed = {id(d): pipe.process_text(*d) for d in docs}

    def negation_triggers(d: Doc) -> None:
        doc = processed[id(d)]
        doc.cache.clear()
        for s in doc.sentences:
            negation.sentence_triggers(doc, s.index)

    rows: list[tuple[str, Callable[[Doc], object]]] = [
        ("ebm TextPipeline.process_text (total)", lambda d: pipe.process_text(d[0], d[1])),
        ("  part: scispacy tokenizer", lambda d: nlp.make_doc(d[0] + "\n\n" + d[1])),
        ("  part: ebm sentence splitter", lambda d: split_spans(d[1])),
        ("  part: abbreviation finder", lambda d: finder.find(sdocs[id(d)], identity)),
        ("  extra: negation triggers, all sentences", negation_triggers),
    ]

    import spacy

    blank = spacy.blank("en")
    sentencizer = spacy.blank("en")
    sentencizer.add_pipe("sentencizer")
    rows.append(("ref B: spacy.blank + sentencizer", lambda d: list(sentencizer(d[0] + "\n\n" + d[1]).sents)))
    if not args.no_pysbd:
        import pysbd

        seg = pysbd.Segmenter(language="en", clean=False, char_span=True)

        def pysbd_ref(d: Doc) -> None:
            blank.make_doc(d[0] + "\n\n" + d[1])
            seg.segment(d[1])

        rows.append(("ref A: spacy.blank tokenizer + pysbd", pysbd_ref))

    total = None
    for name, fn in rows:
        secs = timed(fn, docs, args.repeat)
        per = 1000 * secs / len(docs)
        rel = "" if total is None else f"  ({secs / total:.2f}x ebm total)"
        total = total or secs
        print(f"{name:44} {len(docs) / secs:9.0f} abstracts/s  {per:7.3f} ms/abstract{rel}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
