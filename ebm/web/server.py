"""The waitress server for ``ebm serve``, answering its own errors as the app does.

waitress refuses some requests before the Flask application sees them (a body over
``max_request_body_size``: 413; a malformed request line or header: 400) and answers them in
plain text. On the JSON API (``/api/...``) a client expects JSON everywhere, so those answers
are turned into ``{"error": ..., "field": null}`` there; pages keep waitress's text.
"""

from __future__ import annotations

import json
from typing import Any

from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.task import ErrorTask

from ebm.web.app import API_PREFIX, too_large


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's error response, as JSON when the request was for the JSON API."""

    def execute(self) -> None:
        path = getattr(self.request, "path", "") or ""
        if not path.startswith(API_PREFIX):
            super().execute()
            return
        e = self.request.error
        # waitress's reason in words a client can act on (the app's own message for a 413).
        limit = self.channel.server.adj.max_request_body_size
        message = too_large(limit) if e.code == 413 else f"{e.reason}: {e.body}"
        body = json.dumps({"error": message, "field": None}).encode()
        self.status = f"{e.code} {e.reason}"
        self.response_headers.extend(
            [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
        )
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
    error_task_class = JsonErrorTask


def make_server(app: Any, host: str, port: int, *, threads: int, max_body: int) -> Any:
    """A waitress server for ``app`` whose own error answers are JSON under ``/api/``."""
    server = create_server(
        app, host=host, port=port, threads=threads, max_request_body_size=max_body, ident="ebm"
    )
    # waitress builds one channel per connection from this attribute (see WSGIServer.handle_accept).
    server.channel_class = JsonErrorChannel
    return server
