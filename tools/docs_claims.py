"""Write the generated parts of the paper pages of the documentation site, from the registry and the store.

    python tools/docs_claims.py                       # docs/papers/_record/<slug>.md and _claims/<slug>.md
    python tools/docs_claims.py --store FILE          # read the verdicts from another store
    python tools/docs_claims.py --check               # exit 1 if a paper has no page docs/papers/<slug>.md

``_record/<slug>.md`` is the PAPER record: title, authors, paper and official code links, deviations.
``_claims/<slug>.md`` is one row per claim (its text, the paper's value, its experiment, its null's label) with,
when the results store exists (``results/icml24.sqlite``), the latest verdict of the method and of its null
(``icml24.core.verdicts.evaluate_paper``); without a store the verdict column says how to run it, except for a
full-only claim whose full run is recorded in the repository (``icml24.core.records``): its verdict is computed from
the recorded metrics and labelled as such. The regime
measurements follow. Nothing here is typed by hand: the pages include these files (``--8<--``), and
``make docs`` runs this script before ``mkdocs build``.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPERS_DOCS = ROOT / "docs" / "papers"
DEFAULT_STORE = ROOT / "results" / "icml24.sqlite"
SNAPSHOT = ROOT / "results-snapshot"  # read when no results store exists (a fresh clone)
_URL = re.compile(r"https?://[^\s,;)]+")


def cell(text: object) -> str:
    """A value as one markdown table cell (pipes escaped, one line)."""
    return " ".join(str(text).split()).replace("|", "\\|") or "-"


def fmt(value: float) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return str(value)
    return f"{value:.4g}"


def linkify(text: str) -> str:
    return _URL.sub(lambda m: f"<{m.group(0)}>", text)


def record_markdown(paper) -> str:
    code = linkify(paper.code) if paper.code else "no official code release is listed in the paper's record"
    lines = [
        f"**Paper:** *{paper.title}*, {paper.authors} ({paper.venue}).  ",
        f"**Official code:** {code}.  ",
        f"**Reproduction:** `src/icml24/papers/{paper.slug.replace('-', '_')}/`, "
        f"`icml24 show {paper.slug}`, `icml24 run {paper.slug}`.",
        "",
    ]
    return "\n".join(lines)


def deviations_markdown(paper) -> str:
    if not paper.deviations:
        return "None declared.\n"
    return "\n".join(f"- {' '.join(d.split())}" for d in paper.deviations) + "\n"


def _measured(measured: dict[str, float]) -> str:
    return ", ".join(f"{k} = {fmt(v)}" for k, v in measured.items()) or "-"


def _verdict(result, slug: str) -> str:
    if result is None:
        return f"not run yet (`icml24 run {slug}`)"
    status = result.verdict.status
    if status == "not run" and result.recorded:  # a recorded run too partial for the claim: say what it holds
        return f"not run ({result.verdict.message}; {result.recorded})"
    if status == "not run":
        return f"not run ({result.verdict.message})" if result.verdict.message.startswith("reads") else "not run"
    detail = _measured(result.verdict.measured) if status != "error" else result.verdict.message
    seeds = f", {result.num_seeds} seed(s), {result.mode}" if result.num_seeds else ""
    recorded = f"; {result.recorded}" if result.recorded else ""
    return f"**{status}** ({detail}{seeds}{recorded})"


def _full_verdict(result, claim) -> str:
    """The claim at the paper's own (``--full``) setting: its verdict on the seeds recorded so far (k of the
    setting's n), or why there is none."""
    exp = claim.experiment
    declared = len(exp.default_seeds(setting="full"))
    from icml24.core.snapshot import full_cost_text

    cost = full_cost_text(exp.paper.slug, exp.name, declared, SNAPSHOT)
    if result is None or not (result.recorded or (result.mode.startswith("full") and result.num_seeds)):
        return (f"no full run recorded (`icml24 run {exp.paper.slug}:{exp.name} --full`: {declared} seed(s); "
                f"{cost or 'no seed measured yet'})")
    text = _verdict(result, exp.paper.slug)
    if result.recorded or result.num_seeds >= declared:
        return text
    so_far = f"{result.num_seeds} of the full setting's {declared} seeds recorded so far"
    so_far += f"; {cost}" if cost else ""
    return f"{text[:-1]}; {so_far})" if text.endswith(")") else f"{text} ({so_far})"


def _controls(paper, claim, result) -> tuple[str, str]:
    """The oracle and family cells: from the stored result when there is one, else what the claim declares."""
    from icml24.core.controls import Family, NoOracle, SingleInstance
    from icml24.core.registry import Verdict
    from icml24.core.report import family_text, oracle_text
    from icml24.core.verdicts import ClaimResult

    oracle, family = claim.resolved_oracle, claim.resolved_family
    if claim.setting == "full" and result is None:  # judged at full only, and no full run of it is recorded
        at_full = f"no full run recorded (a full-setting claim: `icml24 run {claim.experiment.key} --full"
        return (f"{oracle.label}: {at_full} --oracle`)" if oracle is not None and not isinstance(oracle, NoOracle)
                else oracle_text(ClaimResult(paper, claim, Verdict("not run", {}), "")),
                f"{family.label}: {at_full} --family`)" if isinstance(family, Family) else
                f"one instance: {family.reason}" if isinstance(family, SingleInstance) else "-")
    shown = result if result is not None else ClaimResult(paper, claim, Verdict("not run", {}), "")
    oracle_cell = oracle_text(shown) if oracle is None or isinstance(oracle, NoOracle) or result is not None \
        else f"{oracle.label}: not run yet (`icml24 run {paper.slug} --oracle`)"
    if isinstance(family, Family) and result is None:
        family_cell = (f"{family.label}: {len(family.members)} instances ({', '.join(family.members)}), must hold "
                       f"on {family.required(len(family.members))}; not run yet (`icml24 run {paper.slug} --family`)")
    else:
        family_cell = family_text(shown) if not isinstance(family, SingleInstance) else \
            f"one instance: {family.reason}"
    why = _why_not_run(claim)
    oracle_cell = f"{oracle_cell[:-1]}; {why})" if oracle_cell.startswith("not run (") and why else oracle_cell
    family_cell = f"{family_cell[:-1]}; {why})" if family_cell.startswith("not run (") and why else family_cell
    return oracle_cell, family_cell


def _why_not_run(claim) -> str:
    """Why a control is not in the snapshot (``make reproduce`` runs the controls declared cheap) and what one quick
    seed of the claim's experiment costs, from the snapshot's recorded seconds."""
    from icml24.core.snapshot import _duration, recorded_seconds

    exp = claim.experiment
    key = (exp.paper.slug, exp.name, "quick")
    per_seed = recorded_seconds({key}, SNAPSHOT).get(key)
    if per_seed is None:
        return ""
    return (f"`make reproduce` runs only the controls declared cheap; this one reruns the experiment, "
            f"{_duration(per_seed)} per quick seed recorded")


def claims_markdown(paper, store=None, stale: dict[str, str] | None = None, source: str = "") -> str:
    """The claims table (and the regime rows) of ``paper``; verdicts from ``store`` when given (``source`` says what
    it is: the results store, or the results snapshot with its provenance; ``stale`` names the experiments whose
    snapshot rows were made with older code)."""
    results, full_results = None, None
    if store is not None:
        from icml24.core.summary import evaluate_per_setting

        per_setting = evaluate_per_setting(paper, store)
        results, full_results = per_setting["quick"], per_setting["full"]
    if results is None:
        lines = [f"No results store yet: every verdict is not run yet, run `icml24 run {paper.slug}` "
                 f"(and `icml24 run {paper.slug} --null` for the nulls), then `make docs`.", ""]
    else:
        lines = [source or "Latest verdicts from the results store (`results/icml24.sqlite`, the current code "
                 "version).", ""]
    lines += ["| # | Claim (experiment) | Paper | Null (in the method's slot) | Verdict (quick) | "
              "Verdict (paper scale) | Null's verdict | Oracle (should hold) | Instances |",
              "|---|---|---|---|---|---|---|---|---|"]
    recorded = {}
    if results is None:  # a full-only claim with a run recorded in the repository is judged on it all the same
        from icml24.core.verdicts import judge_recorded

        recorded = {i: judge_recorded(paper, c) for i, c in enumerate(paper.claims, 1) if c.setting == "full"}
    for i, claim in enumerate(paper.claims, 1):
        null = claim.resolved_null
        result = results[i - 1] if results is not None else recorded.get(i)
        full_result = full_results[i - 1] if full_results is not None else recorded.get(i)
        if claim.setting == "full":  # judged at full only: its null, oracle and family too
            result = full_result if full_result is not None and full_result.num_seeds else None
        null_result = result.null if result is not None else None
        if null is None:
            null_label, null_verdict = "none declared", "-"
        else:
            null_label = null.label + (" (cheap)" if null.cheap else "")
            null_verdict = _verdict(null_result, f"{paper.slug} --null") if results is not None \
                else f"not run yet (`icml24 run {paper.slug} --null`)"
            if claim.setting == "full" and null_result is None:
                null_verdict = (f"no full run of the null recorded (a full-setting claim: `icml24 run "
                                f"{claim.experiment.key} --full --null`)")
        setting = " (full setting)" if claim.setting == "full" else ""
        if claim.setting == "full":  # a full-only claim has no quick verdict: its one verdict is the full one
            verdict = "- (a full-setting claim: see paper scale)"
        else:
            verdict = _verdict(result, paper.slug)
        full_verdict = _full_verdict(full_result, claim)
        if stale and claim.experiment.key in stale:
            verdict = f"STALE (snapshot made with code {stale[claim.experiment.key]}): {verdict}"
            full_verdict = f"STALE: {full_verdict}" if full_result is not None and full_result.num_seeds \
                else full_verdict
        lines.append(f"| {i} | {cell(claim.text)}{setting} (`{claim.experiment.name}`) | {cell(claim.paper)} | "
                     f"{cell(null_label)} | {cell(verdict)} | {cell(full_verdict)} | {cell(null_verdict)} | "
                     + " | ".join(cell(text) for text in _controls(paper, claim, result)) + " |")
    lines.append("")
    if paper.regimes:
        lines += ["Regime measurements (shown beside the verdicts, never a verdict):", "",
                  "| Measurement | Paper | Experiment | Measured |", "|---|---|---|---|"]
        for regime in paper.regimes:
            measured = _regime_values(regime, store) if store is not None else "not run yet"
            lines.append(f"| {cell(regime.text)} | {cell(regime.paper)} | `{regime.experiment.name}` | "
                         f"{cell(measured)} |")
        lines.append("")
    return "\n".join(lines)


def _regime_values(regime, store) -> str:
    from icml24.core.verdicts import aggregate, canonical_records

    mode, records = canonical_records(store, regime.experiment)
    ok = [r for r in records if r.status == "ok"]
    if not ok:
        return "not run"
    try:
        summary = aggregate(ok, regime.experiment)
    except Exception:  # a broken summarize is an error verdict elsewhere; the plain means here
        summary = aggregate(ok)
    values = ", ".join(f"{k} = {fmt(summary[k])}" if k in summary else f"{k} = (not measured)"
                       for k in regime.metrics)
    return f"{values} ({mode})"


def overview_markdown(papers: dict, store=None, from_snapshot: bool = False) -> str:
    """The docs home's one-screen table: per paper, the claims that hold at quick and at full (of those judged at
    each), the claims read over their whole instance family, and the parity fixture."""
    from icml24.core.summary import evaluate_per_setting, held_at, parity_text

    source = ("Verdicts from the results snapshot committed in the repository." if from_snapshot else
              "Verdicts from the results store." if store is not None else "No results yet: run `make reproduce`.")
    lines = [source, "",
             "| Paper | Claims | Holding (quick) | Holding (full) | Read over their instance family | Parity with the "
             "official code |", "|---|---|---|---|---|---|"]
    for slug, paper in sorted(papers.items()):
        per_setting = evaluate_per_setting(paper, store) if store is not None else {"quick": [], "full": []}
        cells = []
        for mode in ("quick", "full"):
            held, judged = held_at(per_setting[mode], mode)
            cells.append(f"{held} of {judged}" if judged else "not run")
        families = [r for r in per_setting["quick"] if r.family is not None]  # the cheap members run at quick
        read = sum(r.family.status in ("holds", "fails") for r in families)
        cells.append(f"{read} of {len(families)}" if families else "-")
        lines.append(f"| [{slug}](papers/{slug}.md) | {len(paper.claims)} | " + " | ".join(cells)
                     + f" | {cell(parity_text(slug))} |")
    return "\n".join(lines) + "\n"


def _snapshot_source(folder: Path, slug: str) -> str:
    from icml24.core.snapshot import provenance, provenance_text

    made = provenance(folder, slug)
    if not made:
        return "The results snapshot holds no run of this paper yet."
    lines = "; ".join(provenance_text(entry) for entry in made)
    return (f"Verdicts from the results snapshot committed in the repository (`results-snapshot/{slug}.json`), "
            f"computed from its per-seed rows; made on {lines}.")


def write_all(store_path: Path | None = DEFAULT_STORE, out: Path = PAPERS_DOCS,
              snapshot: Path | None = SNAPSHOT) -> list[Path]:
    """Write every paper's record and claims include; returns the files written."""
    from icml24.core.registry import discover

    store, stale, papers, from_snapshot = None, {}, discover(), False
    if store_path is not None and Path(store_path).is_file():
        from icml24.core.store import Store

        store = Store(store_path)
    elif snapshot is not None and any(snapshot.glob("*.json")):  # a fresh clone: the committed snapshot
        from icml24.core.snapshot import snapshot_store

        (store, stale), from_snapshot = snapshot_store(papers, snapshot), True
    written = []
    try:
        for slug, paper in sorted(papers.items()):
            source = _snapshot_source(snapshot, slug) if from_snapshot else ""
            for folder, text in (("_record", record_markdown(paper)), ("_deviations", deviations_markdown(paper)),
                                 ("_claims", claims_markdown(paper, store, stale, source))):
                path = out / folder / f"{slug}.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                written.append(path)
        overview = out / "_claims" / "_overview.md"
        overview.parent.mkdir(parents=True, exist_ok=True)
        overview.write_text(overview_markdown(papers, store, from_snapshot))
        written.append(overview)
    finally:
        if store is not None:
            store.close()
    return written


def missing_pages() -> list[str]:
    """The package's papers (from file names, so a toy paper a test registered is not one) without a page."""
    from icml24.core.registry import paper_modules

    return [slug for slug in sorted(paper_modules()) if not (PAPERS_DOCS / f"{slug}.md").is_file()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=DEFAULT_STORE)
    parser.add_argument("--check", action="store_true", help="exit 1 if a registered paper has no page")
    args = parser.parse_args(argv)
    if args.check:
        missing = missing_pages()
        if missing:
            print(f"no page docs/papers/<slug>.md for: {', '.join(missing)}", file=sys.stderr)
            return 1
        return 0
    written = write_all(args.store)
    source = args.store if args.store.is_file() else \
        "the results snapshot, results-snapshot/" if any(SNAPSHOT.glob("*.json")) else "no store (not run yet)"
    print(f"wrote {len(written)} generated includes under {PAPERS_DOCS.relative_to(ROOT)} (verdicts: {source})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
