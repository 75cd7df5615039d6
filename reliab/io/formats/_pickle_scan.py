"""Pre-scan of a pickle's opcodes: refuse what would make the C unpickler crash, hang or
blow up memory, before it runs.

The unpickler hashes every dict key and set element it receives (``SETITEM``,
``SETITEMS``, ``DICT``, ``ADDITEMS``, ``FROZENSET``).  Hashing a tuple recurses in C, so a
key nested millions deep overflows the C stack, and a key built from shared sub-tuples
(``t = (t, t)`` sixty times) takes 2**60 steps.  The memo (``PUT``/``GET``) lets a few
bytes reference one container any number of times, which readers then expand.  The scan
walks the opcodes with :func:`pickletools.genops` (opcode semantics as documented there)
and tracks, per stack slot, only whether it is a hashable scalar or a container.  Dicts
in a flight-recorder dump are keyed by strings (``FlightRecorder.hpp`` writes ``str`` keys
throughout), so only ``str``, ``int``, ``bytes``, ``float``, ``bool`` and ``None`` may be
hashed.
"""

from __future__ import annotations

import pickletools

from reliab.errors import ParseError

#: references to already-built containers (``GET`` of a memoised list, dict or tuple)
#: beyond :data:`REFS_PER_CONTAINER` per memoised container: a dump written by PyTorch
#: shares strings, a dump written by Python may share a few tuples and lists between
#: entries; neither fans one entry out a million times
MAX_CONTAINER_REFS = 10_000
REFS_PER_CONTAINER = 16

_SCALAR, _CONTAINER, _MARK = 0, 1, 2
_PUSH_SCALAR = frozenset({
    "INT", "BININT", "BININT1", "BININT2", "LONG", "LONG1", "LONG4", "STRING", "BINSTRING", "SHORT_BINSTRING",
    "UNICODE", "SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "BINBYTES", "SHORT_BINBYTES", "BINBYTES8",
    "NONE", "NEWTRUE", "NEWFALSE", "FLOAT", "BINFLOAT",
})
_PUSH_CONTAINER = frozenset({"EMPTY_LIST", "EMPTY_DICT", "EMPTY_TUPLE", "EMPTY_SET", "BYTEARRAY8"})
_NO_EFFECT = frozenset({"PROTO", "FRAME", "STOP"})
_GLOBALS = frozenset({"GLOBAL", "STACK_GLOBAL", "INST"})
_TUPLE_N = {"TUPLE1": 1, "TUPLE2": 2, "TUPLE3": 3}
_GETS = frozenset({"GET", "BINGET", "LONG_BINGET"})
_PUTS = frozenset({"PUT", "BINPUT", "LONG_BINPUT"})


class _Scan:
    """Kinds on the unpickler's stack and in its memo, and the shared-container count."""

    def __init__(self) -> None:
        self.stack: list[int] = []
        self.memo: dict[object, int] = {}
        self.refs = 0
        self.containers = 0

    def pop(self, n: int) -> list[int]:
        if n > len(self.stack) or _MARK in self.stack[len(self.stack) - n:]:
            raise ParseError("stack underflow")
        items = self.stack[len(self.stack) - n:]
        del self.stack[len(self.stack) - n:]
        return items

    def pop_mark(self) -> list[int]:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i] == _MARK:
                items = self.stack[i + 1:]
                del self.stack[i:]
                return items
        raise ParseError("no MARK on the stack")

    def top(self) -> int:
        if not self.stack or self.stack[-1] == _MARK:
            raise ParseError("empty stack")
        return self.stack[-1]

    def step(self, name: str, arg: object) -> None:  # noqa: C901 - one branch per opcode family
        if name in _PUSH_SCALAR:
            self.stack.append(_SCALAR)
        elif name in _PUSH_CONTAINER:
            self.stack.append(_CONTAINER)
        elif name == "MARK":
            self.stack.append(_MARK)
        elif name in _TUPLE_N:
            self.pop(_TUPLE_N[name])
            self.stack.append(_CONTAINER)
        elif name in ("TUPLE", "LIST"):
            self.pop_mark()
            self.stack.append(_CONTAINER)
        elif name in ("DICT", "SETITEMS"):
            _hashable(self.pop_mark()[0::2], name)
            if name == "DICT":
                self.stack.append(_CONTAINER)
        elif name == "SETITEM":
            _hashable(self.pop(2)[:1], name)
        elif name in ("FROZENSET", "ADDITEMS"):
            _hashable(self.pop_mark(), name)
            if name == "FROZENSET":
                self.stack.append(_CONTAINER)
        elif name == "APPEND" or name == "POP":
            self.pop(1)
        elif name in ("APPENDS", "POP_MARK"):
            self.pop_mark()
        elif name == "DUP":
            self.stack.append(self.top())
        elif name in _PUTS or name == "MEMOIZE":
            kind = self.memo[len(self.memo) if name == "MEMOIZE" else arg] = self.top()
            self.containers += kind == _CONTAINER
        elif name in _GETS:
            self.get(arg)
        elif name in _GLOBALS:
            raise ParseError(f"refused to load global {arg or '(from the stack)'}: a dump holds only plain data")
        elif name not in _NO_EFFECT:
            raise ParseError(f"refused opcode {name}: a dump holds only plain data")

    def get(self, key: object) -> None:
        if key not in self.memo:
            raise ParseError(f"memo key {key!r} never stored")
        kind = self.memo[key]
        if kind == _CONTAINER:
            self.refs += 1
            if self.refs > MAX_CONTAINER_REFS + REFS_PER_CONTAINER * self.containers:
                raise ParseError(f"{self.refs} references to {self.containers} shared containers: "
                                 "a dump that fans out")
        self.stack.append(kind)


def _hashable(kinds: list[int], opcode: str) -> None:
    if any(k != _SCALAR for k in kinds):
        raise ParseError(f"{opcode} with a container as dict key or set element (only str, int, bytes, "
                         "float, bool or None are hashed)")


def scan_pickle(data: bytes) -> None:
    """Check a pickle's opcodes before it is unpickled.

    Raises
    ------
    ParseError
        On a dict key or set element that is not a scalar, more container references
        than :data:`MAX_CONTAINER_REFS` plus :data:`REFS_PER_CONTAINER` per memoised
        container, an opcode that builds objects (globals, ``REDUCE``, ``BUILD``, extensions, buffers), or a malformed stream.
    """
    scan = _Scan()
    try:
        for op, arg, _ in pickletools.genops(data):
            scan.step(op.name, arg)
    except ValueError as exc:
        raise ParseError(str(exc)) from None
