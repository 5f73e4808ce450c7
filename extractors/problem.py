"""Problem extractor (Demner-Fushman & Lin 2007, section 5.3).

Every DISORDER concept is a problem; problems are ranked by discourse prominence: mentions in
the title, the introduction/objective section of a structured abstract, or the first two
sentences of an unstructured one weigh more. The top one is the primary problem, the rest
are co-occurring problems. Negated mentions ("no evidence of pneumonia") do not count.

Three refinements follow MeSH indexing practice (the problem is indexed at its most specific):

- kind: generic concepts weigh less (``rules/problem_kinds.tsv``): category roots ("cancer" =
  Neoplasms), pathologic processes ("ischemia"), recurrence;
- composition: a generic disorder with its site or agent in front names the specific one when
  MeSH has that as a term: "prostate carcinoma" -> "prostate cancer" = Prostatic Neoplasms,
  "HIV-infected" -> HIV Infections, "hepatitis C virus infection" -> Hepatitis C;
- specificity: when a disorder and one of its MeSH ancestors are both found ("pain" and
  "postoperative pain"), the descendant takes the ancestor's score.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from ebm.concepts.annotate import Concept
from ebm.mesh import MeshVocabulary, mesh
from ebm.paths import rules_dir
from ebm.text.document import Document, Sentence
from extractors.candidate import Candidate
from extractors.tree_weights import TreeWeights, load_tree_weights

DISORDER = "DISO"
Scope = Literal["title", "title+2", "all"]
SCOPES: tuple[Scope, ...] = ("title", "title+2", "all")

TITLE_WEIGHT = 3.0
PROMINENT_WEIGHT = 1.5  # first two sentences, background/objective sections
BODY_WEIGHT = 1.0
_PROMINENT_SECTION = re.compile(r"BACKGROUND|INTRODUCTION|OBJECTIVE|AIM|PURPOSE|CONTEXT", re.I)

# Composition: other words MeSH uses for the head of a generic disorder mention.
_HEAD_VARIANTS: dict[str, tuple[str, ...]] = {
    "carcinoma": ("cancer", "neoplasms"),
    "carcinomas": ("cancer", "neoplasms"),
    "cancer": ("neoplasms",),
    "cancers": ("cancer", "neoplasms"),
    "tumor": ("cancer", "neoplasms"),
    "tumors": ("cancer", "neoplasms"),
    "tumour": ("cancer", "neoplasms"),
    "tumours": ("cancer", "neoplasms"),
    "neoplasm": ("neoplasms",),
    "malignancy": ("cancer", "neoplasms"),
    "malignancies": ("cancer", "neoplasms"),
    "infection": ("infections",),
    "infections": ("infection",),
    "ulcers": ("ulcer",),
    "fractures": ("fracture",),
    "injuries": ("injury",),
    "trauma": ("injuries", "injury"),
    "diseases": ("disease",),
}
_INFECTED = re.compile(r"^(.+?)-(?:infected|infection|positive|seropositive)$", re.I)
_PREFIX_WORDS = 3  # words before a mention tried for a composition
_NO_PREFIX = frozenset("a an the of in with and or for to by on at from as its their".split())


@dataclass(frozen=True)
class ProblemMention:
    cui: str
    name: str
    start: int
    end: int
    sentence: int
    why: str  # how the concept was found


@cache
def default_problem_kinds() -> TreeWeights:
    return load_tree_weights(rules_dir() / "problem_kinds.tsv", default=1.0)


def mention_weight(sentence: Sentence) -> tuple[float, str]:
    if sentence.position == "title":
        return TITLE_WEIGHT, "title"
    label = sentence.nlm_category or sentence.section_label
    if label and _PROMINENT_SECTION.search(label):
        return PROMINENT_WEIGHT, f"section {label}"
    if not label and sentence.position == "first":
        return PROMINENT_WEIGHT, "first two sentences"
    return BODY_WEIGHT, "body"


def in_scope(sentence: Sentence, scope: Scope) -> bool:
    if scope == "title":
        return sentence.position == "title"
    if scope == "title+2":
        return sentence.position in ("title", "first")
    return True


def is_disorder(ui: str, vocabulary: MeshVocabulary) -> bool:
    d = vocabulary.get(ui)
    return d is not None and any(t.startswith(("C", "F03")) for t in d.tree_numbers)


def _lookup(key: str, vocabulary: MeshVocabulary) -> str | None:
    """The one disorder descriptor a MeSH term names, if any."""
    uis = [u for u in vocabulary.term_index.get(key, ()) if is_disorder(u, vocabulary)]
    return uis[0] if len(set(uis)) == 1 else None


def _composed(doc: Document, c: Concept, vocabulary: MeshVocabulary) -> tuple[str, int] | None:
    """The more specific disorder named by the words before a generic mention, if MeSH has it,
    with the first token of the words it took."""
    s = doc.sentences[c.sentence]
    words = c.text.casefold().split()
    heads = (words[-1], *_HEAD_VARIANTS.get(words[-1], ())) if words else ()
    prefix: list[str] = []
    i = c.token_start - 1
    while i >= s.token_start and len(prefix) < _PREFIX_WORDS:
        t = doc.tokens[i].text.casefold()
        if t in _NO_PREFIX or not re.fullmatch(r"[\w-]+", t):
            break
        prefix.insert(0, t)
        i -= 1
    for k in range(len(prefix)):  # longest prefix first
        pre = prefix[k:]
        keys = [" ".join([*pre, *words[:-1], head]) for head in heads]
        if pre[-1] == "virus" and len(pre) > 1:  # "hepatitis C virus infection": the disease is named
            keys.append(" ".join(pre[:-1]))
        if len(pre) > 1:  # "Helicobacter pylori infection" -> "helicobacter infections"
            keys += [" ".join([pre[0], head]) for head in heads]
        for key in keys:
            ui = _lookup(key, vocabulary)
            if ui and ui != c.cui:
                return ui, c.token_start - len(pre)
    return None


def _mentions(
    doc: Document, concepts: list[Concept], scope: Scope, voc: MeshVocabulary
) -> list[ProblemMention]:
    out: list[ProblemMention] = []
    for c in concepts:
        if DISORDER not in c.groups or c.negated or not in_scope(doc.sentences[c.sentence], scope):
            continue
        composed = _composed(doc, c, voc) if c.cui in voc else None
        if composed is not None:
            ui, first = composed
            d = voc.get(ui)
            assert d is not None
            start = doc.tokens[first].start
            out.append(ProblemMention(ui, d.name, start, c.end, c.sentence, f"composed from {c.name}"))
        else:
            out.append(ProblemMention(c.cui, c.name, c.start, c.end, c.sentence, "concept"))
    # "HIV-infected": an agent's infection written as one adjective, matched by no concept.
    for t in doc.tokens:
        m = _INFECTED.match(t.text)
        if not m or not in_scope(doc.sentences[t.sentence], scope):
            continue
        agent = m.group(1).casefold()
        ui = _lookup(f"{agent} infections", voc) or _lookup(f"{agent} infection", voc)
        if ui:
            d = voc.get(ui)
            assert d is not None
            out.append(ProblemMention(ui, d.name, t.start, t.end, t.sentence, f"{t.text!r}: infection"))
    return out


def is_ancestor(a: str, b: str, voc: MeshVocabulary) -> bool:
    da, db = voc.get(a), voc.get(b)
    if da is None or db is None or a == b:
        return False
    return any(tb.startswith(ta + ".") for ta in da.tree_numbers for tb in db.tree_numbers)


def extract_problems(
    doc: Document,
    concepts: list[Concept],
    scope: Scope = "all",
    vocabulary: MeshVocabulary | None = None,
    kinds: TreeWeights | None = None,
) -> list[Candidate]:
    """Problems best first: ``[0]`` is the primary problem, the rest co-occurring problems."""
    voc = vocabulary or mesh()
    kinds = kinds or default_problem_kinds()
    scores: dict[str, float] = {}
    first: dict[str, ProblemMention] = {}
    reasons: dict[str, list[str]] = {}
    for m in _mentions(doc, concepts, scope, voc):
        pw, where = mention_weight(doc.sentences[m.sentence])
        kind = kinds.weight(m.cui, voc) or (1.0, "not MeSH")
        w = pw * kind[0]
        scores[m.cui] = scores.get(m.cui, 0.0) + w
        first.setdefault(m.cui, m)
        why = f"{doc.text[m.start : m.end]!r} in {where} (+{w:g})"
        if kind[0] != 1.0:
            why += f", {kind[1]} x{kind[0]:g}"
        if m.why != "concept":
            why += f", {m.why}"
        reasons.setdefault(m.cui, []).append(why)
    # Specificity: the most specific disorder found takes the scores of its ancestors.
    final = dict(scores)
    for a in scores:
        below = [b for b in scores if is_ancestor(a, b, voc)]
        if below:
            b = max(below, key=lambda x: (scores[x], -first[x].start))
            final[b] += scores[a]
            final[a] = scores[a] * 0.5
            reasons[b].append(f"takes the score of its MeSH ancestor {first[a].name} (+{scores[a]:g})")
    # Ties go to the earlier mention: the topic is usually named first.
    ranked = sorted(final, key=lambda cui: (-final[cui], first[cui].start))
    return [
        Candidate(
            text=doc.text[first[cui].start : first[cui].end],
            start=first[cui].start,
            end=first[cui].end,
            score=final[cui],
            sentence=first[cui].sentence,
            concepts=(cui,),
            names=(first[cui].name,),
            evidence=tuple(reasons[cui]),
        )
        for cui in ranked
    ]
