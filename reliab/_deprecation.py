"""Deprecated public names: thin aliases that warn once per call and forward.

Old names stay for one release after a rename, as scikit-learn and pandas do, so that
notebooks keep running while they show where to go.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def warn_renamed(old: str, new: str, *, stacklevel: int = 3) -> None:
    """Issue the one ``FutureWarning`` every renamed name uses."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new}",
                  FutureWarning, stacklevel=stacklevel)


def renamed(new: F, old: str) -> F:
    """A function ``old`` that warns and calls ``new`` (same signature and docstring head)."""

    @functools.wraps(new)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warn_renamed(f"reliab.{old}", f"reliab.{new.__name__}")
        return new(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = old
    alias.__doc__ = (f"Deprecated alias of :func:`{new.__name__}` (renamed); it warns and "
                     "forwards every argument.")
    return alias  # type: ignore[return-value]


__all__ = ["renamed", "warn_renamed"]
