"""``reliab sources`` and ``reliab explain``: what reliab reads and how it classifies."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reliab.cli._app import _fail, app
from reliab.cli._render import echo


@app.command()
def sources() -> None:
    """List the registered input formats (and live scheme:// sources), sorted by name."""
    from reliab.cli._render import table
    from reliab.io import available_sources

    rows = sorted(available_sources().itertuples(index=False), key=lambda r: str(r.name))
    echo(table(["name", "table", "summary"], [(r.name, r.table, str(r.summary).replace("``", "")) for r in rows]))


@app.command()
def explain(
    signal: Annotated[str, typer.Argument(help="Signal key, e.g. xid:79 or nccl:watchdog_timeout.")],
    message: Annotated[str | None, typer.Option(help="Message text, for rules that match on it.")] = None,
    rules: Annotated[Path | None, typer.Option(help="A user rules CSV that overrides the shipped one.")] = None,
) -> None:
    """Show which taxonomy rule classifies SIGNAL, and why."""
    from reliab.errors import ReliabError
    from reliab.taxonomy import explain as run_explain
    from reliab.taxonomy import load_rules

    try:
        loaded = load_rules(rules) if rules is not None else None
        explanation = run_explain(signal, message, rules=loaded)
    except (ReliabError, FileNotFoundError) as exc:
        _fail(exc)
    if explanation.rule_id is None and not explanation.key_only and not explanation.catalog:
        near = near_signals(signal, loaded)
        echo(f"Unknown signal {signal!r}: no taxonomy rule and no catalog entry knows it, so it would be"
                   " 'Unclassified'." + (f" Near matches: {', '.join(near)}." if near else ""))
        return
    echo(str(explanation))


def near_signals(signal: str, rules: object = None, n: int = 5) -> list[str]:
    """Known signal keys closest to ``signal``: literal rule keys and catalogued Xids."""
    import difflib
    import re

    from reliab.taxonomy import load_rules
    from reliab.taxonomy.xid import xid_catalog

    table = (rules if rules is not None else load_rules()).table  # type: ignore[attr-defined]
    known: set[str] = set()
    for pattern in table["signal"].astype(str):
        alternatives = re.fullmatch(r"([\w:.-]*)\(([\w|.-]+)\)([\w:.-]*)", pattern)
        if alternatives:
            head, body, tail = alternatives.groups()
            known.update(f"{head}{alt}{tail}" for alt in body.split("|"))
        elif re.fullmatch(r"[\w:.-]+", pattern):
            known.add(pattern)
    known.update(f"xid:{x}" for x in xid_catalog()["xid"])
    return difflib.get_close_matches(signal, sorted(known), n=n, cutoff=0.6)
