"""The web PICO form and JSON API behind ``ebm serve`` (see ``ebm.web.app``)."""

from ebm.web.app import create_app

__all__ = ["create_app"]
