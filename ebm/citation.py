"""The MEDLINE citation record.

A field the source does not give is ``None`` (unknown), never an empty string or list:
an in-process 2016 record has ``mesh_headings=None`` because it is not indexed yet,
which the scorer must tell apart from "indexed, no headings".
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class AbstractSection:
    """One section of an abstract; unstructured abstracts are a single section."""

    text: str
    label: str | None = None  # as printed, e.g. "METHODS AND RESULTS"
    nlm_category: str | None = None  # BACKGROUND, OBJECTIVE, METHODS, RESULTS, CONCLUSIONS, UNASSIGNED


@dataclass(frozen=True)
class Qualifier:
    ui: str | None
    name: str
    major: bool = False


@dataclass(frozen=True)
class MeshHeading:
    descriptor_ui: str | None
    descriptor_name: str
    major: bool = False
    qualifiers: tuple[Qualifier, ...] = ()

    @property
    def is_major(self) -> bool:
        """Main theme of the article: the descriptor or any of its qualifiers is starred."""
        return self.major or any(q.major for q in self.qualifiers)


@dataclass(frozen=True)
class PublicationType:
    ui: str | None
    name: str


@dataclass(frozen=True)
class Journal:
    title: str | None = None
    iso_abbreviation: str | None = None
    medline_ta: str | None = None
    nlm_unique_id: str | None = None


@dataclass(frozen=True)
class Citation:
    pmid: str
    title: str | None = None
    abstract: tuple[AbstractSection, ...] | None = None
    mesh_headings: tuple[MeshHeading, ...] | None = None
    publication_types: tuple[PublicationType, ...] | None = None
    journal: Journal | None = None
    year: int | None = None
    pub_date: str | None = None  # as given: "2016 Mar 12", "1998 Dec-1999 Jan"
    language: str | None = None  # MEDLINE three-letter code, e.g. "eng"
    source: str | None = None  # where the record came from (file name, corpus name)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def abstract_text(self) -> str | None:
        """The abstract as one string (section texts joined by a blank line)."""
        if self.abstract is None:
            return None
        return "\n\n".join(s.text for s in self.abstract)

    @property
    def has_abstract(self) -> bool:
        return bool(self.abstract) and any(s.text.strip() for s in self.abstract or ())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; ``from_dict`` reverses it exactly."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Citation:
        def opt_tuple(items: Any, build: Any) -> Any:
            return None if items is None else tuple(build(x) for x in items)

        def heading(h: dict[str, Any]) -> MeshHeading:
            quals = tuple(Qualifier(**q) for q in h.get("qualifiers", ()))
            return MeshHeading(
                descriptor_ui=h.get("descriptor_ui"),
                descriptor_name=h["descriptor_name"],
                major=bool(h.get("major", False)),
                qualifiers=quals,
            )

        journal = d.get("journal")
        return cls(
            pmid=str(d["pmid"]),
            title=d.get("title"),
            abstract=opt_tuple(d.get("abstract"), lambda s: AbstractSection(**s)),
            mesh_headings=opt_tuple(d.get("mesh_headings"), heading),
            publication_types=opt_tuple(d.get("publication_types"), lambda p: PublicationType(**p)),
            journal=None if journal is None else Journal(**journal),
            year=d.get("year"),
            pub_date=d.get("pub_date"),
            language=d.get("language"),
            source=d.get("source"),
            extra=dict(d.get("extra") or {}),
        )
