"""Editable rule tables (TSV/TOML) shipped with ebm. Loaded and validated by ``ebm.rules``."""
