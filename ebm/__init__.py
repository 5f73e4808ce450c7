"""ebm: evidence-based clinical question answering over MEDLINE."""

__version__ = "0.1.0"
