"""Citation (title + abstract sections) -> ``Document``: tokens, sentences, sections, abbreviations.

Offline by construction: a blank spaCy English pipeline with scispacy's rule tokenizer, no
pretrained model, nothing downloaded. Create one ``TextPipeline`` and reuse it (building the
tokenizer costs ~0.1 s; processing an abstract costs about a millisecond).

Document layout: the title, then each abstract section, joined by blank lines. Sentences never
cross a section, so structured abstracts keep their labels and NLM categories exactly; every
sentence also gets a discourse position (title / first two / middle / last two of the abstract)
for extractors that work on unstructured abstracts.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import spacy
from scispacy.custom_tokenizer import combined_rule_tokenizer
from spacy.attrs import IDX, IS_SPACE, LENGTH

from ebm.citation import AbstractSection, Citation
from ebm.text.abbreviations import AbbreviationFinder
from ebm.text.document import Document, Position, Sentence, Token, UnprocessableText
from ebm.text.sentences import split_spans

SectionsInput = Sequence[AbstractSection] | Sequence[str] | str | None
Splitter = Callable[[str, int, int], list[tuple[int, int]]]

SEPARATOR = "\n\n"  # between title and sections; a line break always ends a sentence


def position_of(i: int, n: int) -> Position:
    """Discourse position of abstract sentence ``i`` of ``n`` (the last one is always "last")."""
    if n >= 2 and i == n - 1:
        return "last"
    if i < 2:
        return "first"
    return "last" if i >= n - 2 else "middle"


def _as_sections(sections: SectionsInput) -> list[AbstractSection]:
    if sections is None:
        return []
    if isinstance(sections, str):
        return [AbstractSection(sections)]
    return [s if isinstance(s, AbstractSection) else AbstractSection(str(s)) for s in sections]


class TextPipeline:
    """Tokenizer, sentence splitter and abbreviation finder, configured once and reused."""

    def __init__(self, *, abbreviations: bool = True, splitter: Splitter = split_spans) -> None:
        self.nlp = spacy.blank("en")
        with warnings.catch_warnings():
            # scispacy's prefix table makes re warn about a "possible set union"; harmless.
            warnings.simplefilter("ignore", FutureWarning)
            self.nlp.tokenizer = combined_rule_tokenizer(self.nlp)
        self.splitter = splitter
        self._abbrev = AbbreviationFinder() if abbreviations else None

    def process(self, citation: Citation) -> Document:
        """The Document for a citation's title and abstract (either may be missing)."""
        return self.process_text(citation.title, citation.abstract, pmid=citation.pmid)

    def process_text(
        self, title: str | None, sections: SectionsInput = None, pmid: str | None = None
    ) -> Document:
        """The Document for a title and abstract sections (``str`` = one unstructured section)."""
        secs = _as_sections(sections)
        parts: list[str] = []
        pieces: list[tuple[int, int, int]] = []  # (section index, start, end) in the joined text
        offset = 0
        if title and title.strip():
            parts.append(title)
            pieces.append((-1, 0, len(title)))
            offset = len(title) + len(SEPARATOR)
        for k, sec in enumerate(secs):
            if not sec.text or not sec.text.strip():
                continue
            parts.append(sec.text)
            pieces.append((k, offset, offset + len(sec.text)))
            offset += len(sec.text) + len(SEPARATOR)
        text = SEPARATOR.join(parts)

        spans: list[tuple[int, int, int]] = []  # (section index, start, end)
        for k, a, b in pieces:
            if k == -1:  # the title is one unit for the extractors, even if it has two sentences
                stripped = text[a:b].strip()
                a += len(text[a:b]) - len(text[a:b].lstrip())
                spans.append((k, a, a + len(stripped)))
            else:
                spans.extend((k, s, e) for s, e in self.splitter(text, a, b))

        if len(text) > self.nlp.max_length:
            # spaCy would raise E088 (and needs ~1 GB per 100,000 characters of text)
            who = f"PMID {pmid}: " if pmid else ""
            raise UnprocessableText(
                f"{who}title and abstract of {len(text):,} characters exceed the text pipeline's "
                f"limit of {self.nlp.max_length:,}"
            )
        sdoc = self.nlp.make_doc(text)
        # Offsets via one array read: iterating spaCy Token objects costs more than the tokenizer.
        idx_len_space = sdoc.to_array([IDX, LENGTH, IS_SPACE]).tolist() if len(sdoc) else []
        words = [text[a : a + n] for a, n, _ in idx_len_space]
        tokens: list[Token] = []
        token_index = [-1] * len(words)
        first = [0] * len(spans)  # token range of each sentence
        last = [0] * len(spans)
        si = -1  # sentence of the current token; sentences and tokens are in text order
        next_start = spans[0][1] if spans else len(text)
        for i, (a, n, space) in enumerate(idx_len_space):
            if space:
                continue
            while a >= next_start:  # the token opens the next sentence (or one after it)
                if si >= 0:
                    last[si] = len(tokens)
                si += 1
                first[si] = len(tokens)
                next_start = spans[si + 1][1] if si + 1 < len(spans) else len(text) + 1
            token_index[i] = len(tokens)
            tokens.append(Token(a, a + n, words[i], si))
        if si >= 0:
            last[si] = len(tokens)
        for i in range(si + 1, len(spans)):  # sentences after the last token (none in practice)
            first[i] = last[i] = len(tokens)

        n_abstract = sum(1 for k, _, _ in spans if k >= 0)
        sentences: list[Sentence] = []
        j = 0
        label: str | None
        cat: str | None
        pos: Position
        for i, (k, a, b) in enumerate(spans):
            if k == -1:
                label, cat, pos = "TITLE", None, "title"
            else:
                sec = secs[k]
                label, cat, pos = sec.label, sec.nlm_category, position_of(j, n_abstract)
                j += 1
            sentences.append(Sentence(i, a, b, text[a:b], label, cat, pos, k, first[i], last[i]))

        doc = Document(text=text, sentences=sentences, tokens=tokens, pmid=pmid)
        if self._abbrev is not None:
            doc.abbreviations, doc.abbreviation_spans = self._abbrev.find(sdoc, token_index, words)
        return doc
