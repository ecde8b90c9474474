"""What the CLI prints about claims, and the runs that put a null, an oracle or a family member in the method's
slot."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from icml24.core.registry import Experiment
from icml24.core.verdicts import ClaimResult

VERDICT_STYLE = {"holds": "green", "fails": "red", "error": "yellow", "not run": "dim"}


def claims_table(console: Console, results: list[ClaimResult], title: str = "claims") -> None:
    if not results:
        return
    from icml24.core.report import family_text, measured_text, null_text, oracle_text

    columns = (("null (should fail)", null_text, any(r.null for r in results)),
               ("oracle (should hold)", oracle_text, any(r.oracle for r in results)),
               ("instances", family_text, any(r.family for r in results)))
    extra = [(name, text) for name, text, shown in columns if shown]
    table = Table(title=title, show_lines=False)
    for column in ("paper", "claim", "measured", "verdict", "seeds", *(name for name, _ in extra)):
        table.add_column(column, overflow="fold")
    for r in results:
        style = VERDICT_STYLE[r.verdict.status]
        row = [r.paper.slug, escape(r.claim.text), escape(measured_text(r)), f"[{style}]{r.verdict.status}[/]",
               str(r.num_seeds)]
        table.add_row(*row, *(escape(text(r)) for _, text in extra))
    console.print(table)


def control_grid(exp: Experiment, base: list[dict] | None, controls: tuple[str, ...], cheap_only: bool = False,
                  setting: str = "quick") -> list[dict]:
    """The overrides that run ``exp``'s nulls, oracles and family members (``controls`` names which), on top of each
    user configuration in ``base``; ``cheap_only``: those declared cheap (``icml24 reproduce`` runs them)."""
    found = [s.overrides for kind in ("null", "oracle") if kind in controls
             for s in (exp.nulls() if kind == "null" else exp.oracles()) if s.cheap or not cheap_only]
    found += exp.family_grid(setting, cheap_only) if "family" in controls else []
    return [{**overrides, **o} for overrides in (base or [{}]) for o in found]


CONTROL = {"null": ("declares no null (no claim of it names what it beats)", "claims run against their nulls "
                     "(each should fail)"),
            "oracle": ("declares no oracle", "claims run against their oracles (each should hold)"),
            "family": ("declares no instance family", "claims read over their instance families")}
