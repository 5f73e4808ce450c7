"""Problem extractor (Demner-Fushman & Lin 2007, section 5.3).

Every DISORDER concept is a problem; problems are ranked by discourse prominence: mentions in
the title, the introduction/objective section of a structured abstract, or the first two
sentences of an unstructured one weigh more. The top one is the primary problem, the rest
are co-occurring problems. Negated mentions ("no evidence of pneumonia") do not count.

Refinements follow MeSH indexing practice (the problem is indexed at its most specific):

- kind: generic concepts weigh less (``rules/problem_kinds.tsv``): category roots ("cancer" =
  Neoplasms), pathologic processes ("ischemia"), recurrence;
- composition: a generic disorder with its site, agent or type around it names the specific one
  when MeSH has that as a term: "prostate carcinoma" -> "prostate cancer" = Prostatic Neoplasms,
  "severe falciparum malaria" -> "malaria, falciparum" (MeSH's inverted form, a word left out),
  "squamous cell cancer of the esophagus" -> "cancer of the esophagus", "HIV-1 infection" ->
  "HIV infection", "HIV-infected" -> HIV Infections, "post-thoracotomy pain" -> "postoperative
  pain", "type 2 (non-insulin-dependent) diabetes" -> "type 2 diabetes mellitus";
- implied problems, weighing less: a vaccine's disease ("hepatitis B vaccine" -> Hepatitis B,
  the paper's example of a problem never named alone), the pain analgesia treats;
- specificity: when a disorder and one of its MeSH ancestors are both found ("pain" and
  "postoperative pain"), the descendant takes the ancestor's score, unless it is named only in a
  less prominent place (the title's "purulent meningitis", the body's "bacterial meningitis").
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

from ebm.concepts.annotate import Concept
from ebm.mesh import MeshVocabulary
from ebm.rules.table import Table
from ebm.text.document import Document, Sentence
from ebm.text.roles import sentence_role
from extractors.candidate import Candidate
from extractors.tree_weights import TreeWeights, tree_weights_from_table

DISORDER = "DISO"
DISORDER_TREES = ("C", "F03")  # MeSH diseases and mental disorders
Scope = Literal["title", "title+2", "all"]
SCOPES: tuple[Scope, ...] = ("title", "title+2", "all")

TITLE_WEIGHT = 3.0
PROMINENT_WEIGHT = 1.5  # first two sentences, background/objective sections
BODY_WEIGHT = 1.0

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
    "diabetes": ("diabetes mellitus",),  # "type 2 diabetes", "non-insulin-dependent diabetes"
    "diabetic": ("diabetes mellitus",),  # "type 2 diabetic subjects"
}
_INFECTED = re.compile(r"^(.+?)-(?:infected|infection|positive|seropositive)$", re.I)
_PREFIX_WORDS = 3  # words before a mention tried for a composition
_SITE_WORDS = 2  # words after "<disorder> of (the)" tried as its site
_NO_PREFIX = frozenset("a an the of in with and or for to by on at from as its their".split())
# A word naming the time after an operation ("post-thoracotomy", "postsurgical", "post-cesarean"):
# MeSH files the disorder as postoperative ("post-thoracotomy pain" = Pain, Postoperative).
_AFTER_SURGERY = re.compile(
    r"^post-?(?:operative|op|surgical|surgery|[a-z]*(?:tomy|tomies|ectomy|plasty|pexy|scopy|scopic|"
    r"section|cesarean|caesarean|partum|procedural))$",
    re.I,
)
_SURGERY_WORD = re.compile(
    r"^(?:surgery|operations?|[a-z]*(?:tomy|ectomy|plasty|pexy|scopy|section|repair|replacement|ligation))$",
    re.I,
)
_STRAIN = re.compile(r"^(.+?)-?\d+$")  # "HIV-1" -> "HIV": MeSH names the agent without its type
_VACCINE = re.compile(r"^(.+?) vaccines?$", re.I)
_GENERIC_VACCINE = frozenset(
    "bacterial viral fungal protozoan subunit protein subunit mrna nucleic acid-based".split()
)
# What a treatment word implies the study is about ("postoperative analgesia": postoperative pain).
_IMPLIED_BY = {"analgesia": "pain", "analgesic": "pain", "analgesics": "pain"}
IMPLIED_WEIGHT = 0.8  # an implied problem (a vaccine's disease, analgesia's pain) weighs less


@dataclass(frozen=True)
class ProblemMention:
    cui: str
    name: str
    start: int
    end: int
    sentence: int
    why: str  # how the concept was found
    weight: float = 1.0  # below 1 for an implied problem


def problem_kinds_from_table(table: Table) -> TreeWeights:
    """rules/problem_kinds.tsv: weights of disorder branches (1 for an unlisted disorder)."""
    return tree_weights_from_table(table, default=1.0, categories=DISORDER_TREES)


def mention_weight(sentence: Sentence) -> tuple[float, str]:
    # The problem is stated where the study's aims and background are (``ebm.text.roles``):
    # those sections, or the first two sentences of an unstructured abstract.
    role = sentence_role(sentence)
    if role.role == "title":
        return TITLE_WEIGHT, "title"
    if role.role in ("background", "objective"):
        return PROMINENT_WEIGHT, role.why()
    return BODY_WEIGHT, "body"


def in_scope(sentence: Sentence, scope: Scope) -> bool:
    if scope == "title":
        return sentence.position == "title"
    if scope == "title+2":
        return sentence.position in ("title", "first")
    return True


def is_disorder(ui: str, vocabulary: MeshVocabulary) -> bool:
    d = vocabulary.get(ui)
    return d is not None and any(t.startswith(DISORDER_TREES) for t in d.tree_numbers)


def _lookup(key: str, vocabulary: MeshVocabulary) -> str | None:
    """The one disorder descriptor a MeSH term names, if any."""
    uis = [u for u in vocabulary.term_index.get(key, ()) if is_disorder(u, vocabulary)]
    return uis[0] if len(set(uis)) == 1 else None


def _word_forms(word: str) -> tuple[str, ...]:
    """A prefix word as MeSH may write it: "post-thoracotomy" -> "postoperative", "hiv-1" -> "hiv"."""
    if _AFTER_SURGERY.match(word):
        return ("postoperative",)
    m = _STRAIN.match(word)
    if m and re.search(r"[a-z]", m.group(1)):
        return (word, m.group(1))
    return (word,)


def _prefix(doc: Document, first_token: int, sentence: Sentence) -> list[tuple[int, tuple[str, ...]]]:
    """Up to ``_PREFIX_WORDS`` words before a mention (token index, forms), nearest last; a
    parenthesis right before it is stepped over ("type 2 (non-insulin-dependent) diabetes")."""
    out: list[tuple[int, tuple[str, ...]]] = []
    i = first_token - 1
    if i > sentence.token_start and doc.tokens[i].text == ")":
        j = i - 1
        while j > sentence.token_start and doc.tokens[j].text != "(" and i - j < 8:
            j -= 1
        if doc.tokens[j].text == "(":
            i = j - 1
    while i >= sentence.token_start and len(out) < _PREFIX_WORDS:
        t = doc.tokens[i].text.casefold()
        if t in _NO_PREFIX or not re.fullmatch(r"[\w-]+", t):
            break
        out.insert(0, (i, _word_forms(t)))
        i -= 1
    return out


def _site(doc: Document, last_token: int, sentence: Sentence) -> list[tuple[int, str]]:
    """The words after "<disorder> of (the)": (last token index, site) for one and two words."""
    toks = doc.tokens[last_token + 1 : sentence.token_end]
    words = [t.text.casefold() for t in toks]
    if not words or words[0] != "of":
        return []
    k = 2 if len(words) > 1 and words[1] == "the" else 1
    out: list[tuple[int, str]] = []
    for n in range(1, _SITE_WORDS + 1):
        part = words[k : k + n]
        if len(part) < n or not all(re.fullmatch(r"[a-z][\w-]*", w) and w not in _NO_PREFIX for w in part):
            break
        out.append((last_token + k + n, " ".join(part)))
    return out[::-1]  # longest first


def _composed(doc: Document, c: Concept, vocabulary: MeshVocabulary) -> tuple[str, int, int] | None:
    """The more specific disorder named by the words around a generic mention, if MeSH has it,
    with the first and last token of the words it took."""
    s = doc.sentences[c.sentence]
    words = c.text.casefold().split()
    if not words:
        return None
    heads = (words[-1], *_HEAD_VARIANTS.get(words[-1], ()))
    body = words[:-1]
    prefix = _prefix(doc, c.token_start, s)
    # Longest first; a word may be left out ("chronic anti-HBe-positive hepatitis B").
    subsets = [
        list(sub) for n in range(len(prefix), 0, -1) for sub in itertools.combinations(range(len(prefix)), n)
    ]
    for sub in subsets:
        first = prefix[sub[0]][0]
        for pre in itertools.product(*(prefix[i][1] for i in sub)):
            keys: list[str] = []
            for head in heads:
                core = " ".join([*body, head])
                keys.append(f"{' '.join(pre)} {core}")
                keys.append(f"{core}, {' '.join(pre)}")  # MeSH's inverted form: "malaria, falciparum"
            if pre[-1] == "virus" and len(pre) > 1:  # "hepatitis C virus infection": the disease is named
                keys.append(" ".join(pre[:-1]))
            for key in keys:
                ui = _lookup(key, vocabulary)
                if ui and ui != c.cui:
                    return ui, first, c.token_end - 1
    # The site after the disorder: "carcinoma of the oesophagus" = "cancer of the esophagus".
    for last, site in _site(doc, c.token_end - 1, s):
        for head in heads:
            for key in (f"{head} of the {site}", f"{head} of {site}", f"{site} {head}"):
                ui = _lookup(key, vocabulary)
                if ui and ui != c.cui:
                    return ui, c.token_start, last
    # "pain after hemorrhoidectomy" = postoperative pain
    after = [t.text.casefold() for t in doc.tokens[c.token_end : min(c.token_end + 4, s.token_end)]]
    if after and after[0] in ("after", "following") and any(_SURGERY_WORD.match(w) for w in after[1:]):
        ui = _lookup(f"postoperative {' '.join(words)}", vocabulary)
        if ui and ui != c.cui:
            return ui, c.token_start, c.token_end - 1
    return None


def _vaccine_target(name: str, vocabulary: MeshVocabulary) -> str | None:
    """The disease a vaccine prevents, from its MeSH name ("Hepatitis B Vaccines" -> Hepatitis B)."""
    m = _VACCINE.match(name)
    if not m:
        return None
    agent = m.group(1).casefold()
    if agent in _GENERIC_VACCINE or "," in name:
        return None
    for part in [agent, *agent.split("-")]:
        for key in (part, f"{part} infections", f"{part} infection"):
            ui = _lookup(key, vocabulary)
            if ui:
                return ui
    return None


def _mention(
    doc: Document,
    ui: str,
    first: int,
    last: int,
    sentence: int,
    why: str,
    w: float,
    voc: MeshVocabulary,
) -> ProblemMention:
    d = voc.get(ui)
    assert d is not None
    return ProblemMention(ui, d.name, doc.tokens[first].start, doc.tokens[last].end, sentence, why, w)


def _mentions(
    doc: Document, concepts: list[Concept], scope: Scope, voc: MeshVocabulary
) -> list[ProblemMention]:
    out: list[ProblemMention] = []
    ui: str | None  # a MeSH descriptor, when a lookup finds one
    for c in concepts:
        if c.negated or not in_scope(doc.sentences[c.sentence], scope):
            continue
        if DISORDER not in c.groups:
            target = _vaccine_target(c.name, voc) if c.cui in voc else None
            if target:  # the paper's example: a vaccine trial never names the disease alone
                out.append(
                    _mention(
                        doc,
                        target,
                        c.token_start,
                        c.token_end - 1,
                        c.sentence,
                        f"prevented by {c.name}",
                        IMPLIED_WEIGHT,
                        voc,
                    )
                )
            continue
        composed = _composed(doc, c, voc) if c.cui in voc else None
        if composed is not None:
            ui, first, last = composed
            out.append(_mention(doc, ui, first, last, c.sentence, f"composed from {c.name}", 1.0, voc))
        else:
            out.append(ProblemMention(c.cui, c.name, c.start, c.end, c.sentence, "concept"))
    for t_index, t in enumerate(doc.tokens):
        if not in_scope(doc.sentences[t.sentence], scope):
            continue
        # "HIV-infected": an agent's infection written as one adjective, matched by no concept.
        m = _INFECTED.match(t.text)
        if m:
            for agent in _word_forms(m.group(1).casefold()):
                ui = _lookup(f"{agent} infections", voc) or _lookup(f"{agent} infection", voc)
                if ui:
                    out.append(
                        _mention(doc, ui, t_index, t_index, t.sentence, f"{t.text!r}: infection", 1.0, voc)
                    )
                    break
            continue
        # "postoperative analgesia": the treatment names the problem it treats.
        implied = _IMPLIED_BY.get(t.text.casefold())
        if implied:
            s = doc.sentences[t.sentence]
            keys = [implied]
            prefix = _prefix(doc, t_index, s)
            if prefix:
                keys.insert(0, f"{prefix[-1][1][-1]} {implied}")
            for key in keys:
                ui = _lookup(key, voc)
                if ui:
                    first = prefix[-1][0] if key != implied else t_index
                    out.append(
                        _mention(
                            doc, ui, first, t_index, t.sentence, f"treated by {t.text!r}", IMPLIED_WEIGHT, voc
                        )
                    )
                    break
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
    *,
    vocabulary: MeshVocabulary,
    kinds: TreeWeights,
) -> list[Candidate]:
    """Problems best first: ``[0]`` is the primary problem, the rest co-occurring problems;
    ``kinds``: rules/problem_kinds.tsv."""
    voc = vocabulary
    return _rank(doc, _mentions(doc, concepts, scope, voc), voc, kinds)


def extract_problems_by_scope(
    doc: Document,
    concepts: list[Concept],
    *,
    vocabulary: MeshVocabulary,
    kinds: TreeWeights,
) -> dict[Scope, list[Candidate]]:
    """``extract_problems`` in every scope, the mentions found once: a scope's mentions are the
    whole abstract's that lie in its sentences."""
    voc = vocabulary
    mentions = _mentions(doc, concepts, "all", voc)
    return {
        scope: _rank(doc, [m for m in mentions if in_scope(doc.sentences[m.sentence], scope)], voc, kinds)
        for scope in SCOPES
    }


def _rank(
    doc: Document, mentions: list[ProblemMention], voc: MeshVocabulary, kinds: TreeWeights
) -> list[Candidate]:
    scores: dict[str, float] = {}
    first: dict[str, ProblemMention] = {}
    reasons: dict[str, list[str]] = {}
    place: dict[str, float] = {}  # the most prominent place each problem is named in
    for m in mentions:
        pw, where = mention_weight(doc.sentences[m.sentence])
        place[m.cui] = max(place.get(m.cui, 0.0), pw)
        kind = kinds.weight(m.cui, voc) or (1.0, "not MeSH")
        w = pw * kind[0] * m.weight
        scores[m.cui] = scores.get(m.cui, 0.0) + w
        first.setdefault(m.cui, m)
        why = f"{doc.text[m.start : m.end]!r} in {where} (+{w:g})"
        if kind[0] != 1.0:
            why += f", {kind[1]} x{kind[0]:g}"
        if m.why != "concept":
            why += f", {m.why}"
        reasons.setdefault(m.cui, []).append(why)
    # Specificity: the most specific disorder found takes the scores of its ancestors, unless
    # it is named only in a less prominent place ("deep venous thrombosis" in the title, the
    # "post-thrombotic syndrome" it may lead to in the results).
    final = dict(scores)
    for a in scores:
        below = [
            b for b in scores if is_ancestor(a, b, voc) and (place[b] >= place[a] or place[b] > BODY_WEIGHT)
        ]
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
