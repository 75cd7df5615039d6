"""A thin JSON-over-HTTP client for the live sources, on the standard library.

Why ``urllib`` and not ``requests``/``httpx``: the Prometheus HTTP API needs GET requests with
form-encoded parameters and JSON answers, nothing else; ``urllib.request`` does that with
timeouts, HTTPS, ``HTTP(S)_PROXY``/``NO_PROXY`` and basic authentication, and neither
``requests`` nor ``httpx`` is among reliab's dependencies, so adding one would buy nothing for
~60 lines.  Every failure becomes one :class:`~reliab.errors.SourceError` line, or an
:class:`ApiError` that the caller may act on (a server limit to split a query around).

An answer is untrusted input, and the credentials of a location are for its server only:

* redirects are refused, not followed: ``urllib`` would send the ``Authorization`` header
  on to whatever host the ``Location`` names and the answer from there would be taken as
  the server's (RFC 9110 section 15.4 leaves following a redirect to the client), so a
  redirect is an error naming where it pointed: give the final address instead;
* one request has a total deadline, ``timeout_s`` from the first byte sent to the last
  byte read (a watchdog shuts the socket down when it passes, so a server sending one
  byte at a time cannot hold the run), and an answer larger than ``max_bytes`` is refused;
* JSON nested too deeply for the decoder (``RecursionError``) or too big to decode
  (``MemoryError``) is a source error, like any other answer that does not read.
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import threading
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlencode
from urllib.request import HTTPHandler, HTTPRedirectHandler, HTTPSHandler, Request, build_opener

from reliab._version import __version__
from reliab.errors import SourceError
from reliab.io._redact import hide_password

#: default limit of one answer's size (bytes), for HTTP answers and command output alike
MAX_BYTES = 512 * 2**20
#: bytes of an error answer read for its message
_ERROR_BODY = 64 * 1024
_PIECE = 1 << 16


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


class _Redirected(Exception):
    """The server answered with a redirect (refused, see the module notes)."""

    def __init__(self, code: int, target: str) -> None:
        super().__init__(code, target)
        self.code, self.target = code, target


class _Refuse(HTTPRedirectHandler):
    def redirect_request(self, req: Request, fp: Any, code: int, msg: str, headers: Any,
                         newurl: str) -> None:
        fp.close()
        raise _Redirected(code, newurl)


class _Watchdog:
    """Shuts down the sockets of one request when its deadline passes."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._socks: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def watch(self, sock: socket.socket) -> None:
        self._socks.append(sock)
        if self.expired:
            self._cut()

    def _cut(self) -> None:
        self.expired = True
        for sock in self._socks:
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain call, also for TLS sockets
            except OSError:
                pass

    def handlers(self) -> list[Any]:
        """urllib handlers whose connections report their socket to this watchdog."""
        dog = self

        class Tracked:
            def do_open(self, http_class: Any, req: Request, **kw: Any) -> Any:
                class Connection(http_class):  # type: ignore[misc, valid-type]
                    def connect(self) -> None:
                        super().connect()
                        dog.watch(self.sock)

                return super().do_open(Connection, req, **kw)  # type: ignore[misc]

        return [type("Http", (Tracked, HTTPHandler), {})(), type("Https", (Tracked, HTTPSHandler), {})(), _Refuse()]


def _read(response: Any, limit: int, too_big: str) -> bytearray:
    """The body of ``response``, at most ``limit`` bytes (else ``SourceError(too_big)``)."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise SourceError(too_big)
    body = bytearray()  # grown in place: no second copy when the answer is complete
    while piece := response.read1(_PIECE):
        body += piece
        if len(body) > limit:
            raise SourceError(too_big)
    return body


def get_json(url: str, params: dict[str, Any], *, location: str, timeout_s: float,
             headers: dict[str, str] | None = None, max_bytes: int = MAX_BYTES) -> dict[str, Any]:
    """GET ``url?params`` and return the decoded JSON object.

    ``timeout_s`` bounds the whole request (connecting, waiting and reading), ``max_bytes``
    the answer's size; a redirect is refused.

    Raises
    ------
    ApiError
        An HTTP error status, or a JSON answer whose ``status`` is ``error``.
    SourceError
        The server cannot be reached, does not answer in full within ``timeout_s``, redirects,
        answers more than ``max_bytes``, or answers something that is not a JSON object.
    """
    location = hide_password(location)
    full = f"{url}?{urlencode(params)}"
    request = Request(full, headers={"Accept": "application/json",
                                     "User-Agent": f"reliab/{__version__}", **(headers or {})})
    late = f"{location}: {url} did not answer in full within {timeout_s:g} s (raise timeout_s=)"
    too_big = (f"{location}: the answer of {url} is larger than the limit of {max_bytes:,} bytes"
               " (raise max_bytes=, or shorten the window or step=)")
    with _Watchdog(timeout_s) as dog:
        try:
            with build_opener(*dog.handlers()).open(request, timeout=timeout_s) as response:
                body = _read(response, max_bytes, too_big)
        except _Redirected as exc:
            raise SourceError(f"{location}: {url} answered with a redirect (HTTP {exc.code}) to"
                              f" {hide_password(exc.target)}: redirects are not followed, so the"
                              " credentials stay with the server named; give the final address") from None
        except HTTPError as exc:
            kind, error = _error_doc(exc.read(_ERROR_BODY) or b"")
            raise ApiError(f"{location}: HTTP {exc.code} {exc.reason} from {url}"
                           + (f": {error}" if error else ""), exc.code, kind, error) from None
        except SourceError:
            raise
        except Exception as exc:
            if dog.expired:
                raise SourceError(late) from None
            raise _unreachable(exc, location, url, timeout_s) from None
        if dog.expired:
            raise SourceError(late)
    return _decoded(body, location, url)


def _unreachable(exc: Exception, location: str, url: str, timeout_s: float) -> Exception:
    """The one-line error of a request that failed before an answer was read in full."""
    if isinstance(exc, URLError):
        reason = exc.reason.strerror if isinstance(exc.reason, OSError) and exc.reason.strerror else exc.reason
        if isinstance(exc.reason, TimeoutError):
            return SourceError(f"{location}: {url} did not answer within {timeout_s:g} s (raise timeout_s=)")
        return SourceError(f"{location}: cannot reach {url}: {reason}")
    if isinstance(exc, TimeoutError):
        return SourceError(f"{location}: {url} did not answer within {timeout_s:g} s (raise timeout_s=)")
    if isinstance(exc, http.client.HTTPException | ConnectionError):
        return SourceError(f"{location}: {url} broke the connection ({type(exc).__name__}: {exc})")
    return exc


def _decoded(body: bytes | bytearray, location: str, url: str) -> dict[str, Any]:
    """The JSON object of an answer, or a source error saying why not."""
    try:
        doc = json.loads(body)
    except ValueError:
        raise SourceError(f"{location}: {url} did not answer JSON (is this the server's address"
                          " and path prefix?)") from None
    except RecursionError:
        raise SourceError(f"{location}: the answer of {url} is nested too deeply to read") from None
    except MemoryError:
        raise SourceError(f"{location}: the answer of {url} is too big to decode in memory") from None
    if not isinstance(doc, dict):
        raise SourceError(f"{location}: {url} answered JSON that is not an object")
    if doc.get("status") == "error":
        kind, error = str(doc.get("errorType") or ""), str(doc.get("error") or "")
        raise ApiError(f"{location}: {url} refused the query: {error or kind}", 200, kind, error)
    return doc
