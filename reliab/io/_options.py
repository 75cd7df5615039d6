"""The per-source options of the registered readers, read off their signatures.

Every reader is ``read(path, *, option=default, ...)``; the keyword-only parameters other
than ``strict`` are the options a user can pass to :func:`reliab.ingest` (``year=``,
``tz=``, ``boot_time=``…), put in a hand-over manifest, or give on the command line.  This
module collects them once — name, annotation, default, the sources that accept each and
the first sentence of its numpydoc description — so the CLI and the manifest grow a new
option as soon as a reader declares it, with no list to edit.
"""

from __future__ import annotations

import datetime as _dt
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from reliab.io._registry import parsers, sources

#: reader parameters that are driver switches, not per-source options
DRIVER_PARAMETERS = frozenset({"strict"})
_NAMED = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@dataclass(frozen=True)
class OptionSpec:
    """One per-source option: its name, annotation text, the sources that take it, a doc line."""

    name: str
    annotation: str
    sources: tuple[str, ...]
    doc: str

    @property
    def kind(self) -> str:
        """How a text value (command line) is converted: int, float, bool, list, mapping or str."""
        return kind_of(self.annotation)


def kind_of(annotation: str) -> str:
    """Conversion kind of an annotation string (``"int | None"`` -> ``"int"``)."""
    words = set(re.findall(r"[A-Za-z_]+", annotation))
    if words & {"Mapping", "dict"}:
        return "mapping"
    if words & {"Sequence", "list"}:
        return "list"
    if words & {"str", "datetime", "Timestamp", "tzinfo"}:
        return "str"
    for kind in ("bool", "int", "float"):
        if kind in words:
            return kind
    return "str"


def doc_lines(fn: Callable[..., Any]) -> dict[str, str]:
    """``{parameter: first sentence}`` from a numpydoc ``Parameters`` section."""
    doc = inspect.getdoc(fn) or ""
    match = re.search(r"^Parameters\n-+\n(.*?)(?:\n\n[A-Z][a-z]+\n-+\n|\Z)", doc, re.S | re.M)
    if not match:
        return {}
    out: dict[str, str] = {}
    name = None
    for line in match.group(1).splitlines():
        head = re.match(r"^(\w+(?:, \w+)*)\s*(?::|$)", line)
        if head:
            name = head.group(1)
            out[name] = ""
        elif name and line.startswith(" ") and line.strip():
            out[name] = (out[name] + " " + line.strip()).strip()
    # the first sentence: up to a full stop or semicolon, not the one of an abbreviation (e.g., i.e.)
    first = {k: re.split(r"(?<!\be\.g\.)(?<!\bi\.e\.)(?<=[.;])\s", v, maxsplit=1)[0].rstrip(".;")
             for k, v in out.items()}
    plain = {k: re.sub(r":\w+:`~?([^`]+)`", r"\1", v).replace("``", "") for k, v in first.items()}
    return {name.strip(): v for k, v in plain.items() for name in k.split(",")}


def _options_of(name: str, fn: Callable[..., Any], found: dict[str, dict[str, Any]]) -> None:
    docs = doc_lines(fn)
    for p in list(inspect.signature(fn).parameters.values())[1:]:
        if p.kind not in _NAMED or p.name in DRIVER_PARAMETERS:
            continue
        entry = found.setdefault(p.name, {"annotations": [], "sources": [], "doc": ""})
        annotation = p.annotation if isinstance(p.annotation, str) else inspect.formatannotation(p.annotation)
        if annotation not in entry["annotations"]:
            entry["annotations"].append(annotation)
        entry["sources"].append(name)
        entry["doc"] = entry["doc"] or docs.get(p.name, "")


def reader_options() -> dict[str, OptionSpec]:
    """Every option some registered reader or live source accepts, by name (sorted).

    An option taken by several readers with different annotations keeps them all, joined
    with ``|`` (``tz``: ``str`` for most, ``str | tzinfo | None`` for the kernel reader).
    """
    found: dict[str, dict[str, Any]] = {}
    for parser in parsers():
        _options_of(parser.name, parser.read, found)
    for source in sources():
        _options_of(f"{source.scheme}://", source.read, found)
    return {name: OptionSpec(name, " | ".join(e["annotations"]), tuple(e["sources"]), e["doc"])
            for name, e in sorted(found.items())}


def accepted_by(source: str) -> frozenset[str]:
    """Option names the reader of ``source`` accepts (``KeyError`` for an unknown source)."""
    return frozenset(name for name, spec in reader_options().items() if source in spec.sources)


#: options that are instants whatever their annotation (``time=`` of a dcgm-exporter scrape or
#: an ``nvidia-smi -q`` snapshot, ``start=``/``end=`` of a window or of a clockless sample loop)
_TIME_OPTIONS = frozenset({"time", "start", "end"})


def takes_time(spec: OptionSpec) -> bool:
    """Whether option ``spec`` is an instant, so a TOML date-time (``time = 2024-06-03T12:00:00Z``,
    TOML v1.0.0 "Offset Date-Time"/"Local Date-Time") is a valid manifest value for it."""
    return spec.name in _TIME_OPTIONS or bool(re.search(r"datetime|Timestamp|Moment", spec.annotation))


def toml_time_text(spec: OptionSpec, value: Any) -> Any:
    """A TOML date-time given to a string-only time option as ISO 8601 text (what the
    reader parses: ``2024-06-03T12:00:00+00:00``; a local date-time stays without offset,
    so the reader's ``tz`` applies); any other value unchanged."""
    if isinstance(value, _dt.datetime | _dt.date) and not re.search(r"datetime|Timestamp|Moment", spec.annotation):
        return value.isoformat()
    return value


def value_problem(spec: OptionSpec, value: Any) -> str | None:
    """Why ``value`` (from TOML) does not suit ``spec``; ``None`` if it does."""
    kind = spec.kind
    ok = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, int | float) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
        "str": isinstance(value, str) or (isinstance(value, _dt.datetime | _dt.date) and takes_time(spec)),
        "list": isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value)),
        "mapping": isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in value.items()),
    }[kind]
    if ok and kind == "str" and isinstance(value, str):
        try:
            _check_text(spec, value)
        except ValueError as exc:
            return f"cannot read {value!r} ({exc})"
    if ok:
        return None
    want = {"int": "an integer", "float": "a number", "bool": "true or false", "str": "a string",
            "list": "a string or a list of strings", "mapping": "a table of strings"}[kind]
    return f"must be {want} ({spec.annotation}), got {type(value).__name__} {value!r}"


def _check_text(spec: OptionSpec, text: str) -> None:
    """``ValueError`` for a zone that does not exist (``tz``) or an instant that does not parse
    (``boot_time``, ``start``…): the readers would set aside every line they read with it."""
    if spec.name == "tz":
        from reliab.io._localtime import resolve_tz

        resolve_tz(text)
    elif spec.name == "boot_time" or takes_time(spec):
        import pandas as pd

        try:
            pd.Timestamp(text)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(f"not a date or time ({exc})") from None


def convert_text(spec: OptionSpec, text: str | list[str]) -> Any:
    """A command-line value converted for ``spec`` (``KEY=VALUE`` items for a mapping).

    Raises
    ------
    ValueError
        The text does not convert; the message names the option.
    """
    kind = spec.kind
    try:
        if kind == "mapping":
            items = [text] if isinstance(text, str) else list(text)
            if kind_of(spec.annotation.replace("Mapping", "").replace("dict", "")) == "list" and not any(
                    "=" in item for item in items):
                return items  # an option that takes a list or a mapping, given as plain items
            pairs = [item.split("=", 1) for item in items]
            if any(len(p) != 2 or not p[0] for p in pairs):
                raise ValueError("expected THEIR=OURS items")
            return {k.strip(): v.strip() for k, v in pairs}
        if kind == "int":
            return int(text)  # type: ignore[arg-type]
        if kind == "float":
            return float(text)  # type: ignore[arg-type]
        if kind == "bool":
            return str(text).lower() in ("1", "true", "yes", "on")
        if kind == "str" and isinstance(text, str):
            _check_text(spec, text)
    except ValueError as exc:
        raise ValueError(f"option --{spec.name.replace('_', '-')}: cannot read {text!r} ({exc})") from None
    return text


__all__ = ["OptionSpec", "reader_options", "accepted_by", "value_problem", "convert_text", "kind_of",
           "DRIVER_PARAMETERS"]
