"""The hand-over manifest: ``reliab.toml`` beside the logs says how to read them.

A cluster team hands over one folder and one small file instead of a command line::

    # reliab.toml
    policy = "training-run"          # run-level: any keyword of reliab.ingest
    skip = ["truth/**", "notes/*.pdf"]
    tz = "UTC"                       # a per-source option here applies to every file

    [[files]]                        # per glob: source and per-source options
    glob = "syslog/*"
    source = "kernel"
    tz = "America/Los_Angeles"
    year = 2024

    [[files]]
    glob = "dmesg/node0007.log"
    boot_time = 2024-06-01T00:00:12Z
    host = "node0007"

Globs are relative to the manifest's folder and use ``/``; ``*`` and ``?`` stay within one
path segment, ``**`` spans folders, a pattern without ``/`` matches a file name at any
depth, and a pattern ending in ``/`` matches everything under that folder (the rules of
``.gitignore``).  Every ``[[files]]`` entry whose glob matches a file applies, in order, a
later one overriding an earlier one (as in ``.gitattributes``).  Per-source options are
those of the registered readers (:func:`reliab.io._options.reader_options`), so a new
reader option is a manifest key at once.  Values given to :func:`reliab.ingest` or on the
command line override the manifest.

Every problem names the file, the line and the key: ``reliab.toml:9: [[files]] #1: key
'yaer' is not an option of any reader (did you mean 'year'?)``.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reliab._contain import inside, pseudo_device, real
from reliab.errors import ReliabError
from reliab.io._glob import Glob
from reliab.io._options import OptionSpec, reader_options, toml_time_text, value_problem
from reliab.io._quarantine import check_limit
from reliab.io._registry import get_parser, parsers

#: file name looked for in every folder given to ``ingest``
MANIFEST_NAME = "reliab.toml"
#: largest manifest read (a real one is a few hundred bytes)
MAX_MANIFEST_BYTES = 1 << 20
#: manifest keys that are neither reader options nor run-level ingest keywords
_OWN_KEYS = ("skip", "files", "source")


class ManifestError(ReliabError):
    """A hand-over manifest that cannot be used; the message names file, line and key."""


def glob_regex(pattern: str) -> Glob:
    """Compile a manifest glob (``.gitignore`` rules, see the module doc) to a matcher.

    The matcher's ``fullmatch`` takes a path relative to the manifest folder, with ``/``,
    in time linear in the path (:class:`reliab.io._glob.Glob`: a hand-over's glob is
    untrusted and a backtracking regex could be made to run for ever).
    """
    return Glob(pattern)


@dataclass(frozen=True)
class FileRule:
    """One ``[[files]]`` entry: a glob and the source/options of the files it matches."""

    glob: str
    options: Mapping[str, Any]
    line: int
    regex: Glob = field(repr=False, compare=False)


@dataclass(frozen=True)
class Manifest:
    """A loaded manifest: run-level keys, default options, skip globs and per-glob rules."""

    path: Path
    run: Mapping[str, Any]
    defaults: Mapping[str, Any]
    skip: tuple[tuple[str, Glob], ...]
    files: tuple[FileRule, ...]

    @property
    def root(self) -> Path:
        """The folder the globs are relative to."""
        return self.path.parent

    def relative(self, path: str | os.PathLike[str]) -> str:
        """``path`` relative to :attr:`root` with ``/`` (the path itself if not under it)."""
        text = os.fspath(path)
        prefix = os.path.join(str(self.root), "")
        if text.startswith(prefix):
            rel = text[len(prefix):]
            return rel if os.sep == "/" else rel.replace(os.sep, "/")
        return Path(text).as_posix()

    def skipped(self, path: str | os.PathLike[str]) -> str | None:
        """Why ``path`` is skipped (naming the manifest and glob), else ``None``."""
        if not self.skip:
            return None
        rel = self.relative(path)
        for pattern, regex in self.skip:
            if regex.fullmatch(rel):
                return f"skipped by {self.path.name} (skip = {pattern!r})"
        return None

    def source_for(self, path: str | os.PathLike[str]) -> tuple[str, str] | None:
        """``(source, "reliab.toml:LINE")`` when the manifest names the source of ``path``."""
        if not self.files and "source" not in self.defaults:
            return None
        rel = self.relative(path)
        found = None
        if "source" in self.defaults:
            found = (self.defaults["source"], f"{self.path.name} (top level)")
        for rule in self.files:
            if "source" in rule.options and rule.regex.fullmatch(rel):
                found = (rule.options["source"], f"{self.path.name}:{rule.line}")
        return found

    def options_for(self, path: str | os.PathLike[str]) -> dict[str, Any]:
        """Source and options for ``path``: defaults, then each matching ``[[files]]`` in order."""
        out = dict(self.defaults)
        if not self.files:
            return out
        rel = self.relative(path)
        for rule in self.files:
            if rule.regex.fullmatch(rel):
                out.update(rule.options)
        return out


def _line_finder(text: str) -> tuple[list[tuple[int, str]], list[int]]:
    """(key lines, ``[[files]]`` header lines): ``(line, key)`` per ``key =`` line, 1-based."""
    keys, headers = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if re.match(r"^\[\[\s*files\s*\]\]", line):
            headers.append(n)
            keys.append((n, "[[files]]"))
        elif re.match(r"^\[", line):
            keys.append((n, line))
        else:
            m = re.match(r"""^(?:"([^"]+)"|'([^']+)'|([A-Za-z0-9_.-]+))\s*=""", line)
            if m:
                keys.append((n, next(g for g in m.groups() if g is not None)))
    return keys, headers


class _Locator:
    """Line numbers of keys in the manifest text (tomllib keeps none)."""

    def __init__(self, text: str) -> None:
        self.keys, self.headers = _line_finder(text)

    def line(self, key: str, entry: int | None = None) -> int:
        """Line of ``key`` at the top level (``entry`` None) or in ``[[files]]`` #``entry``."""
        start = 0 if entry is None else self.headers[entry]
        end = (self.headers[0] if self.headers else 1 << 60) if entry is None else (
            self.headers[entry + 1] if entry + 1 < len(self.headers) else 1 << 60)
        for n, k in self.keys:
            if start <= n < end and k == key:
                return n
        return start or 1


def _near(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Loader:
    """Validates the parsed TOML of one manifest, collecting the first problem."""

    def __init__(self, path: Path, text: str, run_keys: Iterable[str]) -> None:
        self.path, self.where = path, _Locator(text)
        self.run_keys = frozenset(run_keys)
        self.options = {**reader_options(), "quarantine_limit": OptionSpec(
            "quarantine_limit", "int", tuple(p.name for p in parsers()),
            "Malformed lines of a file kept in full; the rest are counted in one summary row")}

    def fail(self, key: str, message: str, entry: int | None = None) -> ManifestError:
        label = "" if entry is None else f"[[files]] #{entry + 1}: "
        return ManifestError(f"{self.path}:{self.where.line(key, entry)}: {label}key {key!r} {message}")

    def option(self, key: str, value: Any, entry: int | None, source: str | None) -> Any:
        spec = self.options.get(key)
        if spec is None:
            known = [*self.options, *_OWN_KEYS, *(self.run_keys if entry is None else ())]
            raise self.fail(key, "is not an option of any reader" + _near(key, known), entry)
        if source is not None and source not in spec.sources:
            raise self.fail(key, f"is not an option of source {source!r} (taken by {', '.join(spec.sources)})",
                            entry)
        if "Path" in spec.annotation and isinstance(value, str):  # a path: contained like rules =
            value = self.contained(key, value, entry, folder=True)
        problem = value_problem(spec, value)
        if problem is None and key == "quarantine_limit":
            try:
                check_limit(value)
            except ValueError:
                problem = f"must be a non-negative integer, got {value!r}"
        if problem:
            raise self.fail(key, problem, entry)
        return toml_time_text(spec, value)

    def source(self, value: Any, entry: int | None) -> str:
        if not isinstance(value, str):
            raise self.fail("source", f"must be a string, got {type(value).__name__}", entry)
        try:
            get_parser(value)
        except KeyError:
            names = [p.name for p in parsers()]
            raise self.fail("source", f"names no reader: {value!r}{_near(value, names)}; known: "
                            f"{', '.join(sorted(names))}", entry) from None
        return value

    def globs(self, key: str, value: Any, entry: int | None) -> list[tuple[str, Glob]]:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, list) or not all(isinstance(v, str) and v.strip() for v in items):
            raise self.fail(key, "must be a glob or a list of globs", entry)
        try:
            return [(g, glob_regex(g)) for g in items]
        except ValueError as exc:
            raise self.fail(key, f"holds a bad glob ({exc})", entry) from None

    def entry(self, i: int, raw: Any) -> FileRule:
        if not isinstance(raw, dict):
            raise self.fail("[[files]]", "must be a table", i)
        if "glob" not in raw:
            raise self.fail("[[files]]", "has no 'glob' key", i)
        ((pattern, regex),) = self._one_glob(raw["glob"], i)
        source = self.source(raw["source"], i) if "source" in raw else None
        options: dict[str, Any] = {} if source is None else {"source": source}
        for key, value in raw.items():
            if key not in ("glob", "source"):
                options[key] = self.option(key, value, i, source)
        return FileRule(pattern, options, self.where.line("glob", i), regex)

    def _one_glob(self, value: Any, i: int) -> list[tuple[str, Glob]]:
        if not isinstance(value, str):
            raise self.fail("glob", "must be a string", i)
        return self.globs("glob", value, i)

    def load(self, data: dict[str, Any]) -> Manifest:
        run: dict[str, Any] = {}
        defaults: dict[str, Any] = {}
        skip: list[tuple[str, Glob]] = []
        files: list[FileRule] = []
        for key, value in data.items():
            if key == "files":
                if not isinstance(value, list):
                    raise self.fail(key, "must be an array of tables: [[files]]")
                files = [self.entry(i, raw) for i, raw in enumerate(value)]
            elif key == "skip":
                skip = self.globs(key, value, None)
            elif key == "source":
                defaults["source"] = self.source(value, None)
            elif key in self.run_keys:
                run[key] = self._run_value(key, value)
            else:
                defaults[key] = self.option(key, value, None, None)
        return Manifest(self.path, run, defaults, tuple(skip), tuple(files))

    def _run_value(self, key: str, value: Any) -> Any:
        if isinstance(value, dict | list):
            raise self.fail(key, "must be a single value")
        if key == "rules" and isinstance(value, str):  # a rules file beside the manifest
            return self.contained(key, value, None, folder=False)
        return value

    def contained(self, key: str, value: str, entry: int | None, *, folder: bool) -> str:
        """``value`` (a path relative to the manifest's folder) checked to resolve inside that
        folder and to name a regular file (or a folder); the error shows the path given, never
        what it names."""
        root = real(self.path.parent)
        target = real(self.path.parent / value)
        if not inside(target, root):
            raise self.fail(key, f"names {value!r}, which resolves outside the manifest's folder {root}: "
                            "a hand-over manifest may only name files inside its own folder", entry)
        try:
            st = os.stat(target)
        except OSError as exc:
            if folder:
                return target
            raise self.fail(key, f"names {value!r}, which cannot be read ({exc.strerror or exc})", entry) from None
        if folder and stat.S_ISDIR(st.st_mode):
            return target
        if not stat.S_ISREG(st.st_mode) or pseudo_device(st.st_dev):
            raise self.fail(key, f"names {value!r}, which is not a regular file (FIFO, socket or device):"
                            " not read", entry)
        return target


def load_manifest(path: str | os.PathLike[str], *, run_keys: Iterable[str] = ()) -> Manifest:
    """Read and check a hand-over manifest.

    Parameters
    ----------
    path : path
        The TOML file.
    run_keys : iterable of str
        Top-level keys passed to the run (keywords of :func:`reliab.ingest`, e.g. ``rules``,
        ``before``, ``policy``); any other top-level key must be a reader option.

    Raises
    ------
    ManifestError
        Unreadable file, TOML syntax error, unknown key, wrong value type, unknown source;
        the message names the file, the line and the key.
    """
    p = Path(path)
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            raise ManifestError(f"{p}: not a regular file (a FIFO, socket or device): not read")
        with open(p, "rb") as fh:
            data = fh.read(MAX_MANIFEST_BYTES + 1)
        if len(data) > MAX_MANIFEST_BYTES:
            raise ManifestError(f"{p}: larger than {MAX_MANIFEST_BYTES:,} bytes: not a manifest")
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{p}: cannot read the manifest ({exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{p}: not valid TOML: {exc}") from None
    return _Loader(p, text, run_keys).load(data)


def find_manifest(folder: Path) -> Path | None:
    """``folder/reliab.toml`` if it is a regular file inside ``folder`` (a link leading out of
    the folder is no manifest: the walk lists it as an ``outside`` row)."""
    candidate = folder / MANIFEST_NAME
    if not candidate.is_file():
        return None
    if candidate.is_symlink() and not inside(real(candidate), real(folder)):
        return None
    return candidate


__all__ = ["Manifest", "FileRule", "ManifestError", "load_manifest", "find_manifest", "glob_regex",
           "MANIFEST_NAME"]
