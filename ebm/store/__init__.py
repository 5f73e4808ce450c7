"""The local MEDLINE store (SQLite + FTS5), the embedded default ``CitationSource``."""

from ebm.store.default import default_store_path, open_store
from ebm.store.sqlite import Hit, Hits, IngestReport, MedlineStore, StoreStats

__all__ = ["Hit", "Hits", "IngestReport", "MedlineStore", "StoreStats", "default_store_path", "open_store"]
