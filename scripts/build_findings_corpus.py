"""Compact Evidence Inference 2.0 corpus for the findings extractor, read from ../shared.

Reads ``../shared/data/evidence-inference`` (prompts, v2 annotations, article splits and the
abstracts tarball) and writes one gzip JSON-lines file:

- ``{"kind": "article", "pmcid", "split", "title", "sections": [[label, text], ...]}`` for every
  train/validation article that has a prompt and an abstract;
- ``{"kind": "prompt", "id", "pmcid", "split", "intervention", "comparator", "outcome",
  "answers": [{"label": "higher"|"lower"|"no_difference", "evidence": TEXT}, ...]}``.

Labels map ``significantly increased`` (and the raw file's ``significantly increase``) to
``higher``, ``significantly decreased`` to ``lower``, ``no significant difference`` to
``no_difference``. Answers a doctor marked as an invalid label are dropped. Whether the evidence
lies in the abstract is decided at use time by text (``evidence_in_text``), as the README says.

Usage:
  python scripts/build_findings_corpus.py --out /tmp/findings_corpus.jsonl.gz
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import re
import tarfile
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "evidence-inference"

LABELS = {
    "significantly increased": "higher",
    "significantly increase": "higher",
    "significantly decreased": "lower",
    "no significant difference": "no_difference",
}

_HEADING = re.compile(r"^(TITLE|ABSTRACT(?:\.([A-Z0-9 _/&,-]+))?):\s*$")


def parse_abst(text: str) -> tuple[str, list[tuple[str | None, str]]]:
    """Title and labelled sections of an ``.abst`` file (``TITLE:`` / ``ABSTRACT.RESULTS:``)."""
    title = ""
    sections: list[tuple[str | None, str]] = []
    current: str | None = None
    label: str | None = None
    buf: list[str] = []

    def flush() -> None:
        nonlocal title
        body = " ".join(x.strip() for x in buf if x.strip())
        if current == "TITLE":
            title = body
        elif current is not None and body:
            sections.append((label, body))

    for line in text.splitlines():
        m = _HEADING.match(line.strip())
        if m:
            flush()
            buf = []
            current = "TITLE" if m.group(1) == "TITLE" else "ABSTRACT"
            label = m.group(2).strip().replace("_", " ") if m.group(2) else None
            continue
        buf.append(line)
    flush()
    return title, sections


_NLM = {
    "RESULTS": "RESULTS",
    "RESULT": "RESULTS",
    "FINDINGS": "RESULTS",
    "MAIN RESULTS": "RESULTS",
    "CONCLUSIONS": "CONCLUSIONS",
    "CONCLUSION": "CONCLUSIONS",
    "INTERPRETATION": "CONCLUSIONS",
    "DISCUSSION": "CONCLUSIONS",
    "CONCLUSIONS AND RELEVANCE": "CONCLUSIONS",
    "METHODS": "METHODS",
    "METHOD": "METHODS",
    "DESIGN": "METHODS",
    "MATERIALS AND METHODS": "METHODS",
    "PATIENTS AND METHODS": "METHODS",
    "METHODS AND FINDINGS": "METHODS",
    "SETTING": "METHODS",
    "PARTICIPANTS": "METHODS",
    "INTERVENTIONS": "METHODS",
    "BACKGROUND": "BACKGROUND",
    "INTRODUCTION": "BACKGROUND",
    "CONTEXT": "BACKGROUND",
    "OBJECTIVE": "OBJECTIVE",
    "OBJECTIVES": "OBJECTIVE",
    "PURPOSE": "OBJECTIVE",
    "AIM": "OBJECTIVE",
    "AIMS": "OBJECTIVE",
}


def nlm_category(label: str | None) -> str | None:
    """The NLM category of a section heading (UNASSIGNED for others, None without a heading)."""
    if not label:
        return None
    return _NLM.get(label.upper().strip(), "UNASSIGNED")


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def evidence_span(text: str, evidence: str, prefix: int = 60) -> tuple[int, int] | None:
    """Character span of ``evidence`` in ``text`` found as ``evidence_in_text`` finds it (its
    first ``prefix`` characters, case- and space-insensitive); it runs as far as the evidence
    is long, clipped to the text."""
    index = [i for i, ch in enumerate(text) if not ch.isspace()]
    flat = "".join(text[i] for i in index).lower()
    ev = _norm(evidence)
    key = ev[:prefix]
    pos = flat.find(key) if key else -1
    if pos < 0:
        return None
    last = min(pos + len(ev), len(index)) - 1
    return index[pos], index[last] + 1


def evidence_in_text(evidence: str, text: str) -> bool:
    """The README's test: the evidence's first 60 characters occur in the text (case- and
    space-insensitive)."""
    key = _norm(evidence)[:60]
    return bool(key) and key in _norm(text)


def build(data: Path) -> list[dict[str, Any]]:
    splits: dict[str, str] = {}
    for split in ("train", "validation"):
        for line in (data / f"ev2_{split}_article_ids.txt").read_text().split():
            splits[line.strip()] = split
    with gzip.open(data / "prompts.train-validation.csv.gz", "rt", encoding="utf-8") as f:
        prompts = list(csv.DictReader(f))
    answers: dict[str, list[dict[str, str]]] = defaultdict(list)
    with gzip.open(data / "v2_annotations.train-validation.csv.gz", "rt", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["Valid Label"] != "True" or row["Label"] not in LABELS:
                continue
            answers[row["PromptID"]].append(
                {"label": LABELS[row["Label"]], "evidence": row["Annotations"].strip()}
            )
    articles: dict[str, tuple[str, list[tuple[str | None, str]]]] = {}
    with tarfile.open(data / "abstracts.tar.gz") as tar:
        for m in tar.getmembers():
            name = Path(m.name).name
            if not (m.isfile() and name.startswith("PMC") and name.endswith(".abst")):
                continue
            pmcid = name[3:-5]
            if pmcid not in splits:
                continue
            fh = tar.extractfile(m)
            if fh is not None:
                articles[pmcid] = parse_abst(fh.read().decode("utf-8", errors="replace"))
    out: list[dict[str, Any]] = []
    used: set[str] = set()
    for p in prompts:
        pid, pmcid = p["PromptID"], p["PMCID"]
        if pmcid not in splits or pmcid not in articles or not answers.get(pid):
            continue
        used.add(pmcid)
        out.append(
            {
                "kind": "prompt",
                "id": pid,
                "pmcid": pmcid,
                "split": splits[pmcid],
                "intervention": p["Intervention"].strip(),
                "comparator": p["Comparator"].strip(),
                "outcome": p["Outcome"].strip(),
                "answers": answers[pid],
            }
        )
    arts = [
        {
            "kind": "article",
            "pmcid": k,
            "split": splits[k],
            "title": articles[k][0],
            "sections": articles[k][1],
        }
        for k in sorted(used, key=int)
    ]
    return arts + out


Corpus = tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]  # articles by PMCID, prompts


def articles_and_prompts(records: Iterable[dict[str, Any]]) -> Corpus:
    """Articles by PMCID and prompts (in order) of the corpus records."""
    arts: dict[str, dict[str, Any]] = {}
    prompts: list[dict[str, Any]] = []
    for d in records:
        if d["kind"] == "article":
            arts[d["pmcid"]] = d
        else:
            prompts.append(d)
    return arts, prompts


def read_corpus(path: Path) -> Corpus:
    """Articles by PMCID and prompts, from a file written by this script."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return articles_and_prompts(map(json.loads, f))


def load_corpus(path: Path | None) -> Corpus:
    """Articles and prompts from a file written by this script, or built from ../shared
    (``DEFAULT_DATA``) when ``path`` is None."""
    return articles_and_prompts(build(DEFAULT_DATA)) if path is None else read_corpus(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--out", type=Path, default=Path("/tmp/findings_corpus.jsonl.gz"))
    args = ap.parse_args()
    records = build(args.data)
    with gzip.GzipFile(filename="", fileobj=open(args.out, "wb"), mode="wb", mtime=0) as gz:
        for r in records:
            gz.write((json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8"))
    n_p = sum(r["kind"] == "prompt" for r in records)
    print(f"{args.out}: {len(records) - n_p} articles, {n_p} prompts")


if __name__ == "__main__":
    main()
