"""Text processing: sentences, sections, abbreviations, negation (see ``document.py``)."""
