"""MEDLINE/PubMed records: the XML reader and the bundled demo corpus."""

from ebm.medline.bundled import bundled_corpus_path, iter_bundled
from ebm.medline.reader import Deletion, Notice, read_citations, read_records

__all__ = ["Deletion", "Notice", "bundled_corpus_path", "iter_bundled", "read_citations", "read_records"]
