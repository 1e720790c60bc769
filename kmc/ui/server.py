"""The web server of ``kmc ui``: one page and a small JSON API over one :class:`~kmc.ui.session.Session`.

Flask serves ``page.html`` (one self-contained file: inline CSS and script, nothing fetched from the
network) and the API the page calls; every answer that changes the session returns the new snapshot,
so the page redraws from one JSON document:

========================  ====================================================================
``GET  /api/state``        the snapshot (:meth:`Session.snapshot`)
``POST /api/goto``         ``{"path", "step"}``: move the cursor (back, forward, another path)
``POST /api/take``         ``{"index"}``: take an enabled action (extends the path or branches)
``POST /api/bfs``          ``{"max_states", "max_seconds"}``: run a bounded BFS from the cursor
``GET  /api/export/KIND``  the cursor's path as a file: ``itf`` or ``replay``
``POST /api/load``         ``{"text", "name"}``: read a saved ITF trace or replay script back
========================  ====================================================================

A bad request is answered 400 with ``{"error": sentence}``. The server is single-user and binds the
loopback interface unless told otherwise (:func:`serve`); it answers only requests whose ``Host``
is the address it serves, so a page of another site cannot reach it through DNS rebinding.
"""

from __future__ import annotations

import ipaddress
from importlib import resources
from typing import Any

from flask import Flask, Response, jsonify, request
from werkzeug.serving import WSGIRequestHandler, make_server

from explorer.replay import ReplayError
from kmc.ui.session import Session, SessionError

#: The page's Content-Security-Policy: its own inline script and style, calls to its own server, no more.
_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        "img-src data:; form-action 'none'; base-uri 'none'")


def page_html() -> str:
    return (resources.files("kmc.ui") / "page.html").read_text(encoding="utf-8")


def create_app(session: Session, allowed_hosts: set[str] | None = None) -> Flask:
    """The Flask application serving ``session``; when ``allowed_hosts`` is given (``host:port``
    values of the ``Host`` header, read at each request), requests for other hosts are refused."""
    app = Flask("kmc.ui")
    page = page_html().replace("/*DIAGRAM_CSS*/", session.diagram_css())

    @app.before_request
    def _check_host() -> Any:
        if allowed_hosts is not None and request.host not in allowed_hosts:
            return jsonify(error=f"This server answers requests for {', '.join(sorted(allowed_hosts))} only."), 403
        return None

    @app.errorhandler(SessionError)
    @app.errorhandler(ReplayError)
    def _bad_request(error: Exception) -> Any:
        return jsonify(error=str(error)), 400

    @app.get("/")
    def _page() -> Response:
        response = Response(page, mimetype="text/html")
        response.headers["Content-Security-Policy"] = _CSP
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/api/state")
    def _state() -> Any:
        return jsonify(session.snapshot())

    @app.post("/api/goto")
    def _goto() -> Any:
        body = _body()
        session.goto(_int(body, "path"), _int(body, "step"))
        return jsonify(session.snapshot())

    @app.post("/api/take")
    def _take() -> Any:
        session.take(_int(_body(), "index"))
        return jsonify(session.snapshot())

    @app.post("/api/bfs")
    def _bfs() -> Any:
        body = _body()
        max_states = _int(body, "max_states") if body.get("max_states") not in (None, "") else None
        max_seconds = _number(body, "max_seconds") if body.get("max_seconds") not in (None, "") else None
        result = session.search(max_states, max_seconds)
        return jsonify({**session.snapshot(), "search": result})

    @app.get("/api/export/<kind>")
    def _export(kind: str) -> Response:
        name, text = session.export(kind)
        mimetype = "application/json" if name.endswith(".json") else "text/x-python"
        response = Response(text, mimetype=mimetype)
        response.headers["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    @app.post("/api/load")
    def _load() -> Any:
        body = _body()
        text = body.get("text")
        if not isinstance(text, str):
            raise SessionError("Give the saved file's text as \"text\".")
        session.load(text, str(body.get("name") or "")[:100])
        return jsonify(session.snapshot())

    return app


def _body() -> dict[str, Any]:
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        raise SessionError("The request's body must be a JSON object.")
    return body


def _int(body: dict[str, Any], key: str) -> int:
    value = body.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            return int(str(value))
        except ValueError:
            raise SessionError(f"{key} must be a whole number, got {value!r}.") from None
    return value


def _number(body: dict[str, Any], key: str) -> float:
    try:
        return float(str(body.get(key)))
    except ValueError:
        raise SessionError(f"{key} must be a number, got {body.get(key)!r}.") from None


def is_loopback(host: str) -> bool:
    """True when ``host`` (an address or ``localhost``) is the loopback interface."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _QuietRequests(WSGIRequestHandler):
    """No line per request on the terminal: the page calls the API at every click."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        pass


class Server:
    """``session``'s application bound to ``host:port`` (port 0: any free port), threaded: a long
    "run BFS from here" does not stop the page from loading; the session's lock orders the calls."""

    def __init__(self, session: Session, host: str = "127.0.0.1", port: int = 0, check_host: bool = True) -> None:
        allowed: set[str] = set()
        self._server = make_server(host, port, create_app(session, allowed if check_host else None), threaded=True,
                                   request_handler=_QuietRequests)
        self.host, self.port = host, self._server.server_port
        names = {self.url_host, "localhost", "127.0.0.1", "[::1]"} if is_loopback(host) else {self.url_host}
        allowed.update(f"{name}:{self.port}" for name in names)

    @property
    def url_host(self) -> str:
        return f"[{self.host}]" if ":" in self.host else self.host

    @property
    def url(self) -> str:
        return f"http://{self.url_host}:{self.port}/"

    def serve_forever(self) -> None:
        self._server.serve_forever()

    def shutdown(self) -> None:
        self._server.shutdown()

    def close(self) -> None:
        self._server.server_close()
