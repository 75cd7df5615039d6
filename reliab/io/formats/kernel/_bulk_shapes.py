"""The rsyslog kernel signal-line shapes the bulk parser reads column-wise (besides Xid and SXid).

Each :class:`_Kind` of :data:`_KINDS` is one signal line of
:mod:`reliab.io.formats.kernel._kmsg` in its common rsyslog shape: the RFC 3339 prefix
:data:`_HEAD`, ``tag: `` and the message as a regular expression in printable ASCII, with
the row built as the per-line matcher builds it (mlx5 ``en_main.c``/``events.c``/
``health.c``, systemd-networkd, Intel ``igb_main.c`` and phylib ``phy.c`` link loss, nvme
``core.c``/``pci.c``, ``blk-core.c``, MCE ``arch/x86/kernel/cpu/mce/core.c``, APEI
``drivers/acpi/apei/ghes.c``, EDAC ``edac_mc.c``, AER ``drivers/pci/pcie/aer.c``).
:mod:`reliab.io.formats.kernel._bulk` turns them into query plans.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

#: printable ASCII but space, ``:``, ``[`` and ``]`` (``[^\s:\[\]]`` of ``_TAG`` in ASCII)
_WORD = r"[!-9;-Z\\\^-~]"
#: years 1900-2259: a ``datetime64[ns]`` column ends in April 2262 (later years: per line)
_YEAR = r"(?:19[0-9]{2}|2[01][0-9]{2}|22[0-5][0-9])"

#: the RFC 3339 stamp of every bulk shape: seconds 00-59, at most six fraction digits, ``Z`` or
#: an offset of less than 24 hours, with or without its colon (``journalctl -o short-iso``
#: prints ``+0000``): what :meth:`datetime.fromisoformat` reads the same way
_STAMP = (rf"{_YEAR}-[0-9]{{2}}-[0-9]{{2}}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
          r"(?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):?[0-5][0-9])")
#: the rsyslog prefix of the Xid shape (``_bulk._SHAPE``) up to the message, with the host captured
_HEAD = rf"^{_STAMP} (?P<host>{_WORD}+) {_WORD}+(?:\[[0-9]+\])?: "
_P = "[ -~]"  # printable ASCII
_N = "[!-~]"  # printable ASCII but space: ``\S`` of the per-line expressions


def _g(name: str) -> pl.Expr:
    return pl.col("_g").struct.field(name)


@dataclass(frozen=True)
class _Kind:
    """One rsyslog signal-line shape: the message regex after ``tag: `` and its row.

    ``own`` are the :data:`_TRIGGERS` the line holds (every other one is absent), ``once``
    substrings that occur exactly once in the line (which pins where the per-line
    expression's ``search`` lands), ``absent`` substrings that must not occur at all.
    ``signal`` is a key or, for a shape that covers several keys (EDAC UE/CE, the AER
    severities), an expression of the captured groups; ``accept`` narrows the matches to
    those the per-line matcher reads as a signal.
    """

    signal: str | Callable[[], pl.Expr]
    own: tuple[str, ...]
    once: tuple[str, ...]
    body: str
    message: Callable[[], pl.Expr]
    severity: Callable[[], pl.Expr]
    absent: tuple[str, ...] = ()
    accept: Callable[[], pl.Expr] | None = None


#: one shape's plan: its trigger mask, filter, groups, acceptance and row columns
_Plan = tuple[int, pl.Expr, pl.Expr, pl.Expr, tuple[pl.Expr, ...]]


def _const(value: str) -> Callable[[], pl.Expr]:
    return lambda: pl.lit(value)


def _by_aer(fatal: str, nonfatal: str, corrected: str) -> pl.Expr:
    """One of three values by the AER severity a line's groups state (see ``_kmsg._aer``)."""
    return (pl.when(_g("w").str.starts_with("Corr")).then(pl.lit(corrected))
            .when(_g("s") == "Fatal").then(pl.lit(fatal)).otherwise(pl.lit(nonfatal)))


_APEI_SOURCE = "APEI Generic Hardware Error Source"

#: the first line of an AER report, every severity and wording of ``_kmsg._aer``
_AER_TAIL = (rf"AER: (?:Multiple )?(?P<w>Uncorrected|Uncorrectable|Corrected|Correctable) "
             rf"(?:\((?P<s>Fatal|Non-Fatal)\) )?error (?:message )?received(?: from)?:? *(?P<b>{_N}*){_P}*")


def _aer_accept() -> pl.Expr:
    """Corrected without a severity in parentheses, uncorrected with one (else not a signal)."""
    return _g("w").str.starts_with("Corr") == _g("s").is_null()


def _aer_label() -> pl.Expr:
    return _by_aer("Uncorrected (Fatal) error", "Uncorrected (Non-Fatal) error", "Corrected error")


def _aer_kinds() -> tuple[_Kind, _Kind]:
    """The two bulk shapes of an AER report's first line: with and without ``pcieport <bdf>:``."""
    signal = lambda: _by_aer("pcie:aer_fatal", "pcie:aer_nonfatal", "pcie:aer_corrected")  # noqa: E731
    severity = lambda: _by_aer("critical", "error", "warning")  # noqa: E731
    return (
        _Kind(signal, ("AER:",), ("AER:", "pcieport"), rf"pcieport (?P<a>{_N}+?): {_AER_TAIL}",
              lambda: pl.format("{}: AER: {} received: {}", _g("a"), _aer_label(), _g("b")).str.strip_chars(" "),
              severity, accept=_aer_accept),
        _Kind(signal, ("AER:",), ("AER:",), _AER_TAIL,
              lambda: pl.format("AER: {} received: {}", _aer_label(), _g("b")).str.strip_chars(" "),
              severity, absent=("pcieport",), accept=_aer_accept),
    )


#: the other signal lines of :mod:`reliab.io.formats.kernel._kmsg` in their common rsyslog shape; each
#: message is built as its matcher builds it (``str.strip`` strips spaces only in ASCII)
_KINDS = (
    _Kind("nic:link_down", ("mlx5", "Link down"), ("mlx5_core", "Link down"),
          rf"mlx5_core (?P<a>{_N}+) (?P<b>{_N}+): Link down",
          lambda: pl.format("{} ({}): Link down", _g("b"), _g("a")), _const("warning")),
    _Kind("nic:port_module_error", ("mlx5", "Port module event[error]"), ("Port module event[error]",),
          rf"mlx5_core {_P}*Port module event\[error\]: (?P<a>{_P}*)",
          lambda: pl.format("Port module event[error]: {}", _g("a").str.strip_chars(" ")), _const("error")),
    _Kind("nic:health_compromised", ("mlx5", "health compromised"), ("mlx5_core",),
          rf"mlx5_core (?P<a>{_N}*[!-9;-~]):? {_P}*health compromised{_P}*",
          lambda: pl.format("{}: device's health compromised", _g("a")), _const("critical")),
    _Kind("nic:lost_carrier", ("Lost carrier",), ("Lost carrier",), rf"(?P<a>{_N}+): Lost carrier",
          lambda: pl.format("{}: Lost carrier", _g("a")), _const("warning")),
    _Kind("nvme:controller_down", ("controller is down",), ("controller is down",),
          rf"nvme (?P<a>nvme[0-9]+): controller is down(?P<b>{_P}*)",
          lambda: pl.format("{}: controller is down{}", _g("a"), _g("b")).str.strip_chars(" "),
          _const("critical")),
    _Kind("nvme:io_timeout", (" QID ",), (" QID ",),
          rf"nvme (?P<a>nvme[0-9]+): I/O (?P<b>[0-9]+) QID (?P<c>[0-9]+) timeout(?P<d>{_P}*)",
          lambda: pl.format("{}: I/O {} QID {} timeout{}", _g("a"), _g("b"), _g("c"), _g("d")).str.strip_chars(" "),
          _const("error")),
    _Kind("nvme:removed", ("Removing after probe failure",), ("Removing after probe failure",),
          r"nvme (?P<a>nvme[0-9]+): Removing after probe failure status: (?P<b>-?[0-9]+)" + f"{_P}*",
          lambda: pl.format("{}: Removing after probe failure status: {}", _g("a"), _g("b")), _const("critical")),
    _Kind("nic:pcie_power", ("mlx5", "insufficient power"), ("mlx5_core", "insufficient power"),
          rf"mlx5_core (?P<a>{_N}+?):? {_P}*Detected insufficient power on the PCIe slot(?P<b>{_P}*)",
          lambda: pl.format("{}: Detected insufficient power on the PCIe slot{}", _g("a"), _g("b"))
          .str.strip_chars(" "), _const("warning")),
    _Kind("block:io_error", ("I/O error, dev",), ("I/O error, dev",),
          rf"{_P}*I/O error, dev (?P<a>[!-+\--~]+),(?P<b>{_P}*)",
          lambda: pl.format("I/O error, dev {},{}", _g("a"), _g("b")).str.strip_chars(" "), _const("error")),
    _Kind("mce:hardware_error", ("Hardware Error",), ("Hardware Error", "Machine Check"),
          rf"mce: \[Hardware Error\]: CPU (?P<a>[0-9]+): Machine Check(?P<b> Exception)?: (?P<c>{_P}*)",
          lambda: pl.format("CPU {}: Machine Check{}: {}", _g("a"), _g("b").fill_null(""),
                            _g("c").str.strip_chars(" ")),
          lambda: pl.when(_g("b").is_null()).then(pl.lit("error")).otherwise(pl.lit("critical")),
          absent=("Machine check events logged", _APEI_SOURCE)),
    _Kind("mce:events_logged", ("Hardware Error",), ("Hardware Error",),
          r"mce: \[Hardware Error\]: Machine check events logged",
          _const("Machine check events logged"), _const("warning"), absent=(_APEI_SOURCE,)),
    # ghes.c's report head ("{N}[Hardware Error]: Hardware error from APEI ... Source: <n>"), which
    # ``_mce`` reads before anything else; the source named once pins where its search lands
    _Kind("apei:hardware_error", ("Hardware Error",), (_APEI_SOURCE,),
          rf"{_P}*?\[Hardware Error\]: Hardware error from {_APEI_SOURCE}: (?P<a>[0-9]+){_P}*",
          lambda: pl.format("Hardware error from {}: {}", pl.lit(_APEI_SOURCE), _g("a")), _const("error")),
    # Intel igb/ixgbe/i40e "<if> NIC Link is Down", phylib "<if>: Link is Down": ``_LINK_IS_DOWN``
    # searches for the first word followed by it (the lazy words before it find the same one)
    _Kind("nic:link_down", ("Link is Down",), ("Link is Down",),
          rf"(?:{_N}+ )*?(?P<a>{_N}+?):? (?:NIC )?Link is Down{_P}*",
          lambda: pl.format("{}: Link is Down", _g("a")), _const("warning")),
    _Kind(lambda: pl.when(_g("t") == "UE").then(pl.lit("edac:uncorrectable")).otherwise(pl.lit("edac:correctable")),
          ("EDAC",), ("EDAC",), rf"EDAC (?:{_N}+ )?(?P<a>MC[0-9]+): (?P<b>[0-9]+) (?P<t>UE|CE)\b(?P<c>{_P}*)",
          lambda: _g("m").str.strip_chars_end(" "),  # "{a}: {b} {t}{c}": the message as printed
          lambda: pl.when(_g("t") == "UE").then(pl.lit("critical")).otherwise(pl.lit("warning"))),
    *_aer_kinds(),
)
