"""Finding the inputs of a run: every path given or found is either read or accounted for.

:func:`walk` turns the paths given to :func:`reliab.ingest` into an ordered list of
:class:`Entry`: regular files to read, ``scheme://`` live sources, and files set aside
with a reason — an accounting row each, never a silent skip:

============  =======================================================================
source        set aside because
============  =======================================================================
skipped       a hidden file or folder, a documentation file of an exact name
              (:data:`DOC_NAMES`), a Python cache folder, or a ``skip`` glob of the
              hand-over manifest; a sub-folder when ``recursive=False``; the run's own
              store or output folder
special       a FIFO, socket or device: only regular files are opened (opening a FIFO
              blocks until a writer appears); a file of ``/proc``, ``/sys`` or ``/dev``
outside       a symbolic link whose target (resolved) lies outside the folder given, or
              on a kernel pseudo-filesystem: never opened (:mod:`reliab._contain`)
unreadable    a folder that cannot be listed, a broken symbolic link, a file that
              cannot be stat'ed
manifest      the hand-over manifest itself (applied, not read as a log)
duplicate     a second path to a file already read (a symbolic or hard link to it), or
              a file of the same decompressed content as one read (a copy, the same
              file compressed and not)
============  =======================================================================

Files named explicitly are always read (unless special).  The driver adds, per file it
opens, ``empty``, ``unrecognized`` and ``binary`` rows (:mod:`reliab.io._unread`).
Names are kept as the operating system gives them: bytes that are not UTF-8 survive as
``surrogateescape`` text (:func:`os.fsdecode`), so ``open(path)`` still works.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from reliab._contain import OUTSIDE, outside_reason, pseudo_device, pseudo_reason, real
from reliab.errors import InputFileError
from reliab.io._manifest import MANIFEST_NAME, Manifest
from reliab.io._registry import FileResult, url_scheme

SKIPPED = "skipped"
SPECIAL = "special"
UNREADABLE = "unreadable"
MANIFEST = "manifest"
DUPLICATE = "duplicate"
#: documentation that sits beside logs: one of these words (any case), alone or followed by
#: ``-``/``_``/``.`` and more (``LICENSE-Apache-2.0.txt``), with no extension or a
#: documentation extension; ``license-server.log`` or ``notice.log`` are logs and are read
DOC_STEMS = frozenset({"readme", "license", "licence", "copying", "notice", "source", "sources",
                       "authors", "changelog"})
DOC_EXTENSIONS = frozenset({"", ".md", ".txt", ".rst"})
#: folders of tools, never logs
TOOL_FOLDERS = frozenset({"__pycache__"})


@dataclass(frozen=True)
class Entry:
    """One input: a file or URL to read (``result`` None) or a row set aside (``result``)."""

    path: str
    result: FileResult | None = None

    @property
    def url(self) -> bool:
        """Whether the entry is a ``scheme://`` live source."""
        return url_scheme(self.path) is not None


def set_aside(path: str, source: str, reason: str) -> FileResult:
    """An accounting row for an input that is not read: no lines, a reason."""
    return FileResult(path=path, source=source, lines=0, parsed=0, irrelevant=0, malformed=0,
                      reason=reason)


def doc_file(name: str) -> bool:
    """Whether ``name`` is a documentation file (:data:`DOC_STEMS`, :data:`DOC_EXTENSIONS`)."""
    stem, ext = os.path.splitext(name.lower())
    if ext not in DOC_EXTENSIONS:
        return False
    word = re.split(r"[-_.]", stem, maxsplit=1)[0]
    return word in DOC_STEMS


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def special_reason(mode: int) -> str:
    """Why a non-regular, non-folder file is not opened."""
    kind = next((label for test, label in _KINDS if test(mode)), "not a regular file")
    return f"{kind}: only regular files are read (copy it to a file to read it)"


def _oserror(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


class _Walker:
    """Depth-first walk in sorted order, without recursion (a folder nested thousands deep
    is walked like any other); symbolic links followed once (loops reported) and only while
    they stay inside the root they were found under (:mod:`reliab._contain`)."""

    def __init__(self, recursive: bool, manifest_for: Callable[[Path], Manifest | None],
                 on_folder: Callable[[Path], None], exclude: Iterable[str] = ()) -> None:
        self.recursive = recursive
        self.manifest_for = manifest_for
        self.on_folder = on_folder
        self.seen: set[tuple[int, int]] = set()
        self.exclude = frozenset(exclude)
        self.root = ""
        self.pseudo = False

    def folder(self, top: Path) -> Iterator[Entry]:
        """Every entry under ``top`` (a root given by the user), folders before their content."""
        self.root = real(top)
        self.pseudo = pseudo_reason(self.root) is not None
        stack = [top]
        while stack:
            entries, subfolders = self._one(stack.pop())
            yield from entries
            stack.extend(reversed(subfolders))

    def _one(self, root: Path) -> tuple[list[Entry], list[Path]]:
        """The entries of one folder and its sub-folders to walk, in sorted order."""
        try:
            st = root.stat()
            key = (st.st_dev, st.st_ino)
            if key in self.seen:
                return [Entry(str(root), set_aside(str(root), SKIPPED,
                                                   "folder already walked (symbolic link loop)"))], []
            self.seen.add(key)
            with os.scandir(root) as it:
                entries = sorted(it, key=lambda e: e.name)
            self.on_folder(root)
        except OSError as exc:
            return [Entry(str(root), set_aside(str(root), UNREADABLE,
                                               f"folder cannot be listed ({_oserror(exc)})"))], []
        out, folders = [], []
        manifest = self.manifest_for(root)
        for e in entries:
            kind, reason = self.classify(e, manifest)
            if kind == "folder":
                folders.append(Path(e.path))
            elif kind == "file":
                out.append(Entry(e.path))
            else:
                out.append(Entry(e.path, set_aside(e.path, kind, reason)))
        return out, folders

    def classify(self, e: os.DirEntry[str], manifest: Manifest | None) -> tuple[str, str]:
        """("file" | "folder" | a set-aside source, reason) for one entry of a folder governed
        by ``manifest``."""
        name = e.name
        try:
            is_dir = e.is_dir()
            is_file = not is_dir and e.is_file()
        except OSError as exc:
            return UNREADABLE, f"cannot stat ({_oserror(exc)})"
        if name.startswith("."):
            return SKIPPED, "hidden folder: not walked" if is_dir else "hidden file"
        if e.is_symlink() and (why := outside_reason(e.path, self.root)) is not None:
            return OUTSIDE, why
        if is_dir and self.exclude and real(e.path) in self.exclude:
            return SKIPPED, "this run's own store or output folder: not read as input"
        if is_file and (why := self.pseudo_file(e)):
            return SPECIAL, why
        if is_dir:
            if name in TOOL_FOLDERS:
                return SKIPPED, "Python cache folder: not walked"
            if not self.recursive:
                return SKIPPED, "sub-folder: not walked (recursive=False)"
            return "folder", ""
        if manifest is not None:
            if name == MANIFEST_NAME and Path(e.path) == manifest.path:
                return MANIFEST, "hand-over manifest: applied to this folder, not read as a log"
            why = manifest.skipped(e.path)
            if why:
                return SKIPPED, why
        if is_file:
            return ("file", "") if not doc_file(name) else (SKIPPED, "documentation file (README, LICENSE, SOURCE…)")
        return self.other(e.path)

    def pseudo_file(self, e: os.DirEntry[str]) -> str | None:
        """Why the regular file ``e`` lies on a pseudo-filesystem (never opened), else ``None``."""
        try:
            dev = e.stat().st_dev
        except OSError:
            return None
        if not (self.pseudo or pseudo_device(dev)):
            return None
        return pseudo_reason(e.path, dev) or "a file of a kernel pseudo-filesystem: never read"

    @staticmethod
    def other(path: str) -> tuple[str, str]:
        """A path that is neither a folder nor a regular file (following symbolic links)."""
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            return UNREADABLE, f"broken symbolic link (to {os.readlink(path)!r})" if os.path.islink(path) \
                else "vanished while walking"
        except OSError as exc:
            return UNREADABLE, f"cannot stat ({_oserror(exc)})"
        return SPECIAL, special_reason(mode)


def _given(item: str | os.PathLike[str]) -> str:
    return item if isinstance(item, str) else os.fsdecode(os.fspath(item))


def walk(paths: Iterable[str | os.PathLike[str]], *, recursive: bool = True,
         manifest_for: Callable[[Path], Manifest | None] | None = None,
         on_folder: Callable[[Path], None] | None = None,
         exclude: Iterable[str | os.PathLike[str]] = ()) -> list[Entry]:
    """Every input of a run, in order: folders walked (sorted), explicit files, URLs.

    Each path appears once (the first time it is found).  ``on_folder(folder)`` is called
    as each folder is entered, before its entries are classified (the driver loads a
    manifest found there); ``manifest_for(folder)`` gives the hand-over manifest that
    governs a folder (its ``skip`` globs), if any.  Folders in ``exclude`` (the run's own
    store or output) are set aside as ``skipped`` where a walk meets them.

    Raises
    ------
    InputFileError
        A path given does not exist.
    """
    walker = _Walker(recursive, manifest_for or (lambda _: None), on_folder or (lambda _: None),
                     {real(x) for x in exclude})
    out: dict[str, Entry] = {}
    for item in paths:
        name = _given(item)
        if url_scheme(name) is not None:
            out.setdefault(name, Entry(name))
            continue
        p = Path(name)
        if not os.path.lexists(p):
            raise InputFileError(f"{p}: no such file or directory")
        if p.is_dir():
            found: Iterable[Entry] = walker.folder(p)
        elif p.is_file() and (why := pseudo_reason(p)) is not None:
            found = [Entry(str(p), set_aside(str(p), SPECIAL, why))]
        elif p.is_file():
            found = [Entry(str(p))]
        else:
            kind, reason = walker.other(str(p))
            found = [Entry(str(p), set_aside(str(p), kind, reason))]
        for entry in found:
            out.setdefault(entry.path, entry)
    return _once_per_file(list(out.values()))


def _file_key(path: str) -> tuple[int, int] | None:
    """``(device, inode)`` of the file ``path`` names (links followed), ``None`` if unknown."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _once_per_file(entries: list[Entry]) -> list[Entry]:
    """Entries with every file read once: a second path to the same file (a symbolic link
    such as ``latest.log`` beside its target, a hard link) is set aside as ``duplicate``.

    The path kept is the first that is not a symbolic link (the file where it lives), else
    the first found; reading both would count every line and signal twice.
    """
    paths: dict[tuple[int, int], list[int]] = {}
    for i, entry in enumerate(entries):
        if entry.result is None and not entry.url and (key := _file_key(entry.path)) is not None:
            paths.setdefault(key, []).append(i)
    out = list(entries)
    for same in paths.values():
        if len(same) < 2:
            continue
        kept = next((i for i in same if not os.path.islink(entries[i].path)), same[0])
        for i in same:
            if i != kept:
                path = entries[i].path
                link = "a symbolic link" if os.path.islink(path) else "a hard link"
                out[i] = Entry(path, set_aside(path, DUPLICATE, f"{link} to {entries[kept].path}, read there"
                                                                " (each file is read once)"))
    return _once_per_content(out)


def _host_by_path(path: str) -> bool:
    """Whether the reader sniffing picks for ``path`` names the host by the path (``host=``)."""
    from reliab.io._readfile import choose_source
    from reliab.io._registry import get_parser, options_for

    try:
        read = get_parser(choose_source(Path(path)).source).read
    except KeyError:  # empty, binary, unrecognized: no reader, no host
        return False
    return "host" in options_for(read, {"host": None})


def _once_per_content(entries: list[Entry]) -> list[Entry]:
    """Entries with each content read once: a copy of a file read, or the same file
    compressed (``x.csv`` and ``x.csv.xz``), is set aside as ``duplicate`` naming the file
    read (see :mod:`reliab.io._twins`)."""
    from reliab.io._twins import content_twins

    files = [i for i, e in enumerate(entries) if e.result is None and not e.url]
    twins = content_twins([entries[i].path for i in files], _host_by_path)
    out = list(entries)
    for k, first in twins.items():
        path, kept = entries[files[k]].path, entries[files[first]].path
        out[files[k]] = Entry(path, set_aside(path, DUPLICATE, f"the same content as {kept} (decompressed),"
                                                               " read there (each content is read once)"))
    return out


#: sources of rows for inputs never opened (their content is not part of the run)
NOT_OPENED = (SKIPPED, SPECIAL, UNREADABLE, DUPLICATE, OUTSIDE)

__all__ = ["Entry", "walk", "set_aside", "doc_file", "special_reason", "SKIPPED", "SPECIAL", "UNREADABLE",
           "MANIFEST", "DUPLICATE", "OUTSIDE", "NOT_OPENED", "DOC_STEMS", "DOC_EXTENSIONS"]
