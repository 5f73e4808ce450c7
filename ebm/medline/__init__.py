"""MEDLINE/PubMed records: the XML reader and the bundled demo corpus."""

from ebm.medline.reader import Deletion, read_citations, read_records

__all__ = ["Deletion", "read_citations", "read_records"]
