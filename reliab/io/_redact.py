"""Passwords out of locations: ``scheme://user:password@host`` is shown as ``scheme://user:***@host``.

A live source's location may carry credentials (``prometheus://user:password@host:9090``);
they are for the server named there and nobody else, so every message, accounting or
quarantine row, file and line of output shows the location through :func:`hide_password`.
"""

from __future__ import annotations

import re

#: the user-info part of a URL: everything between ``scheme://`` and the last ``@`` of the
#: authority (an authority ends at the first ``/``, ``?``, ``#`` or blank, RFC 3986 section 3.2);
#: ``scheme:/`` too, the form a URL takes once a path library has collapsed its ``//``
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*:/{1,2})(?P<info>[^/?#\s]*)@")


def _masked(match: re.Match[str]) -> str:
    user, colon, _password = match["info"].partition(":")
    return f"{match['scheme']}{user}{':***' if colon else ''}@"


def hide_password(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` in it replaced by ``***``.

    >>> hide_password("prometheus://ops:s3cret@prom:9090/x failed")
    'prometheus://ops:***@prom:9090/x failed'
    >>> hide_password("/tmp/prometheus:/ops:s3cret@prom:9090: no such file")
    '/tmp/prometheus:/ops:***@prom:9090: no such file'
    """
    return _USERINFO.sub(_masked, text) if "@" in text else text


__all__ = ["hide_password"]
