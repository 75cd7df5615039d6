"""A thin JSON-over-HTTP client for the live sources, on the standard library.

Why ``urllib`` and not ``requests``/``httpx``: the Prometheus HTTP API needs GET requests with
form-encoded parameters and JSON answers, nothing else; ``urllib.request`` does that with
timeouts, HTTPS, ``HTTP(S)_PROXY``/``NO_PROXY`` and basic authentication, and neither
``requests`` nor ``httpx`` is among reliab's dependencies, so adding one would buy nothing for
~60 lines.  Every failure becomes one :class:`~reliab.errors.SourceError` line, or an
:class:`ApiError` that the caller may act on (a server limit to split a query around).
"""

from __future__ import annotations

import base64
import http.client
import json
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import Request, urlopen

from reliab._version import __version__
from reliab.errors import SourceError


class ApiError(SourceError):
    """The server answered with an error document (``status: error``) or an HTTP error."""

    def __init__(self, message: str, status: int, error_type: str, error: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_type = error_type
        self.error = error


def basic_auth(user: str | None, password: str | None) -> dict[str, str]:
    """The ``Authorization`` header for ``user:password`` taken from a URL, if any."""
    if not user:
        return {}
    token = base64.b64encode(f"{user}:{password or ''}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


def _error_doc(body: bytes) -> tuple[str, str]:
    try:
        doc = json.loads(body)
    except ValueError:
        return "", body.decode("utf-8", "replace").strip().splitlines()[0][:200] if body.strip() else ""
    if not isinstance(doc, dict):
        return "", ""
    return str(doc.get("errorType") or ""), str(doc.get("error") or "")


def get_json(url: str, params: dict[str, Any], *, location: str, timeout_s: float,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
    """GET ``url?params`` and return the decoded JSON object.

    Raises
    ------
    ApiError
        An HTTP error status, or a JSON answer whose ``status`` is ``error``.
    SourceError
        The server cannot be reached, does not answer in ``timeout_s``, or answers something
        that is not a JSON object.
    """
    full = f"{url}?{urlencode(params)}"
    request = Request(full, headers={"Accept": "application/json",
                                     "User-Agent": f"reliab/{__version__}", **(headers or {})})
    try:
        with urlopen(request, timeout=timeout_s) as response:  # noqa: S310 - URL built from the user's location
            body = response.read()
    except HTTPError as exc:
        kind, error = _error_doc(exc.read() or b"")
        raise ApiError(f"{location}: HTTP {exc.code} {exc.reason} from {url}"
                       + (f": {error}" if error else ""), exc.code, kind, error) from None
    except URLError as exc:
        reason = exc.reason.strerror if isinstance(exc.reason, OSError) and exc.reason.strerror else exc.reason
        raise SourceError(f"{location}: cannot reach {url}: {reason}") from None
    except TimeoutError:
        raise SourceError(f"{location}: {url} did not answer within {timeout_s:g} s (raise timeout_s=)") from None
    except (http.client.HTTPException, ConnectionError) as exc:
        raise SourceError(f"{location}: {url} broke the connection ({type(exc).__name__}: {exc})") from None
    try:
        doc = json.loads(body)
    except ValueError:
        raise SourceError(f"{location}: {url} did not answer JSON (is this the server's address"
                          " and path prefix?)") from None
    if not isinstance(doc, dict):
        raise SourceError(f"{location}: {url} answered JSON that is not an object")
    if doc.get("status") == "error":
        kind, error = str(doc.get("errorType") or ""), str(doc.get("error") or "")
        raise ApiError(f"{location}: {url} refused the query: {error or kind}", 200, kind, error)
    return doc
