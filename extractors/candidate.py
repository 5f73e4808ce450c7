"""The record every extractor returns: a scored candidate with its span and evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Candidate:
    text: str  # the extracted phrase as written
    start: int  # character offsets into Document.text
    end: int
    score: float  # the extractor's confidence; higher is better
    sentence: int  # index into Document.sentences
    concepts: tuple[str, ...] = ()  # concept IDs (MeSH UIs) behind the candidate
    names: tuple[str, ...] = ()  # their preferred names
    evidence: tuple[str, ...] = ()  # why it scored what it did, one reason per item

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "score": round(self.score, 4),
            "sentence": self.sentence,
            "concepts": list(self.concepts),
            "names": list(self.names),
            "evidence": list(self.evidence),
        }
