"""The ``icml24`` command: list, show, run, reproduce, report, sweep."""

from __future__ import annotations

import json
import sys
from enum import Enum
from pathlib import Path

import click
import typer

try:  # recent Typer vendors its own copy of click
    from typer._click import exceptions as _typer_click
except ImportError:  # pragma: no cover - older Typer uses click itself
    _typer_click = click.exceptions
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from icml24.cli_claims import CONTROL, VERDICT_STYLE, claims_table, control_grid
from icml24.core import registry
from icml24.core.params import check_seed, parse_grid, parse_seeds
from icml24.core.preflight import check_backend, check_data, check_output, check_output_folder
from icml24.core.registry import Experiment, Paper
from icml24.core.runner import BACKENDS, CRASHED, RAY_WORKER_DIED, plan, run_tasks
from icml24.core.snapshot import SNAPSHOT_FOLDER, estimate_lines, snapshot_store, write_snapshot
from icml24.core.store import DEFAULT_STORE, RunRecord, Store, check_store, check_writable_folder, config_hash
from icml24.core.verdicts import (
    ClaimResult,
    claims_for_tasks,
    evaluate_paper,
    family_claims_for_tasks,
    null_claims_for_tasks,
)

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Reproduce ICML 2024 papers: run experiments, check claims, write the report.")
console = Console()
err_console = Console(stderr=True)


_INTERRUPT_REPORTED = False  # the runner said what an interruption kept: main adds no second line
MAX_RUNS = 10_000  # a larger plan needs --yes (a typo such as --seeds 0-1000000 should not start a million runs)
StoreOpt = typer.Option(DEFAULT_STORE, "--store", help="SQLite results file.")
JsonOpt = typer.Option(None, "--json", help="Write a machine-readable summary (list of claim verdicts) here.")
JobsOpt = typer.Option(1, "--jobs", "-j", help="Experiments run at once (process pool or Ray CPUs).")
Backend = Enum("Backend", {name: name for name in BACKENDS}, type=str)  # --backend is a choice: typer checks it
BackendOpt = typer.Option("local", "--backend", help="Where to run.")
AddressOpt = typer.Option(None, "--address", help="Ray cluster address (default: start Ray on this machine).")
ForceOpt = typer.Option(False, "--force", help="Run again even what the store already holds.")
FullOpt = typer.Option(False, "--full", help="Paper-scale settings instead of the quick ones.")
YesOpt = typer.Option(False, "--yes", help=f"Run even more than {MAX_RUNS:,} planned runs.")
DryRunOpt = typer.Option(False, "--dry-run", help="Plan and check everything, print the count, run nothing.")
NullOpt = typer.Option(False, "--null", help="Run each claim's null instead of the method: what the claim says the "
                       "method beats (or nothing) in the method's slot. Every claim should then fail.")
OracleOpt = typer.Option(False, "--oracle", help="Run each claim's oracle instead of the method: what a perfect "
                         "method gives in its slot (the held-out data, the true graph). Every claim should then hold.")
FamilyOpt = typer.Option(False, "--family", help="Run every member of each claim's instance family and read each "
                         "claim over them: holds on k of n instances.")


def papers() -> dict[str, Paper]:
    """Every registered paper (the package's, and any a caller registered with ``registry.register_module``)."""
    registry.discover()
    return registry.registered()


def _resolve(target: str) -> list[Experiment]:
    return registry.resolve(target)  # imports only the paper named: a typo is answered at once


def _seed_list(seed: int | None, seeds: str | None) -> list[int] | None:
    if seed is not None and seeds is not None:
        raise ValueError("give --seed or --seeds, not both")
    if seed is not None:
        return [check_seed(seed)]
    return parse_seeds(seeds) if seeds is not None else None


class RunsFailed(Exception):
    """Some runs ended in error (a crash, a NaN, a lost worker): the command exits 1 and says so."""


def _print_record(record: RunRecord) -> None:
    style = "green" if record.status == "ok" else "red"
    detail = f"{len(record.metrics)} metrics" if record.status == "ok" else record.error.splitlines()[0]
    console.print(f"[{style}]{record.status:>5}[/] {record.paper}:{record.experiment} seed={record.seed} "
                  f"({record.seconds:.1f} s) {detail}", highlight=False)


def _write_json(path: Path | None, results: list[ClaimResult], extra: list[dict] | None = None) -> None:
    if path is None:
        return
    payload = [r.as_json() for r in results] + (extra or [])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(payload, indent=2))
    console.print(f"summary written to {path}")


def _execute(experiments: list[Experiment], seeds: list[int] | None, full: bool, grid_for, store_path: Path,
             backend: str, jobs: int, address: str | None, force: bool, yes: bool = False,
             dry_run: bool = False) -> tuple[Store | None, list]:
    backend = getattr(backend, "value", backend)  # the Backend choice, or a plain name from a caller
    check_backend(backend, jobs, address)
    count = sum(len(seeds if seeds is not None else exp.default_seeds(setting=exp.setting(full)))
                * len(grid_for(exp) or [{}]) for exp in experiments)
    if count > MAX_RUNS and not yes:
        raise ValueError(f"{count:,} runs planned, more than {MAX_RUNS:,}: check --seeds/--set, or add --yes to "
                         "run them")
    check_store(store_path)  # a foreign, newer or unwritable store is refused before anything is created
    from icml24.data import check_data_root

    check_data_root()  # a mistyped ICML24_DATA is answered before any work, not by every run erroring
    store_folder = store_path.resolve().parent  # figures and caches are found from any working folder
    tasks = []
    for exp in experiments:
        tasks += plan([exp], seeds, full=full, grid=grid_for(exp), store_folder=store_folder,
                      show_progress=sys.stdout.isatty() and jobs == 1)
    check_data(tasks)  # the data the planned runs read, not one error row per seed
    if backend == "ray" and address and not dry_run:  # a dry run plans without joining (or waiting for) a cluster
        from icml24.core.runner import check_ray_address

        check_ray_address(address)  # probed (and refused) before the store is created
    console.print(f"{len(tasks)} run(s) planned; backend={backend}, jobs={jobs}", highlight=False)
    if dry_run:  # the first 20 runs, then the estimated time from the results snapshot's recorded seconds
        more = [f"  ... and {len(tasks) - 20} more"] if len(tasks) > 20 else []
        for line in [f"  {task.label} {task.config}" for task in tasks[:20]] + more + estimate_lines(tasks, jobs=jobs):
            console.print(line, highlight=False)
        return None, tasks
    store = Store(store_path)
    done: list[RunRecord] = []

    def on_result(record: RunRecord) -> None:
        done.append(record)
        _print_record(record)

    def on_retry(task, why: str) -> None:
        err_console.print(f"[yellow]warning:[/] the worker of {task.label} died ({why}); trying it once more",
                          highlight=False, soft_wrap=True)

    try:
        if jobs > 1 or backend == "ray":  # one bar over all runs; with one job the experiment shows its own bars
            from rich.progress import Progress

            with Progress(console=console, transient=True) as bar:
                overall = bar.add_task("experiments", total=len(tasks))

                def on_result_with_bar(record: RunRecord) -> None:
                    on_result(record)
                    bar.advance(overall)

                run_tasks(tasks, store, backend=backend, jobs=jobs, address=address, force=force,
                          on_result=on_result_with_bar, on_retry=on_retry)
        else:
            run_tasks(tasks, store, backend=backend, jobs=jobs, address=address, force=force, on_result=on_result,
                      on_retry=on_retry)
    except KeyboardInterrupt:  # Typer turns it into exit status 130; the message is ours to print
        global _INTERRUPT_REPORTED
        _ignore_further_interrupts()
        _INTERRUPT_REPORTED = True
        store.close()
        err_console.print(f"[red]interrupted:[/] {len(done)} of {len(tasks)} run(s) finished in this session and "
                          f"are stored in {store_path}; run the same command again to resume", highlight=False,
                          soft_wrap=True)
        raise
    skipped = len(tasks) - len(done)
    if skipped:
        console.print(f"{skipped} run(s) already in the store were skipped (--force runs them again)")
    store.failed = [r for r in done if r.status != "ok"]  # the command reports its results, then exits 1
    store.planned = len(tasks)
    return store, tasks


def _finish(db: Store) -> None:
    failed, planned = getattr(db, "failed", []), getattr(db, "planned", 0)
    db.close()
    if failed:
        crashed = [r.error for r in failed if r.error.startswith(CRASHED)]
        on_ray = sum(RAY_WORKER_DIED in error for error in crashed)  # Ray runs a task once: no "twice" there
        lost = "".join(f", {n} of them {what}" for n, what in (
            (len(crashed) - on_ray, "lost their worker process twice (out of memory or killed)"),
            (on_ray, "lost their Ray worker, which Ray does not retry (out of memory, killed, or its node left)"))
            if n)
        first = failed[0]
        why = first.error.splitlines()[0] if first.error else "unknown error"
        raise RunsFailed(f"{len(failed)} of {planned} run(s) ended in error{lost}; first: {first.paper}:"
                         f"{first.experiment} seed={first.seed}: {why}")


def _print_version(value: bool) -> None:
    if value:
        from icml24 import __version__

        console.print(f"icml24 {__version__}", highlight=False)
        raise typer.Exit()


@app.callback()
def _options(version: bool = typer.Option(False, "--version", is_eager=True, callback=_print_version,
                                          help="Print the version and exit.")) -> None:
    """Reproduce ICML 2024 papers: run experiments, check claims, write the report."""


@app.command("list", short_help="Papers, experiments, claims and their last verdicts.")
def list_papers(store: Path = StoreOpt) -> None:
    """Papers, experiments, claims and the last verdict from the store.

    Read from the papers' index (icml24/papers/index.json), importing no paper: only those whose verdicts the store
    can change (current runs stored, or a recorded run) are imported, to judge their claims.
    """
    from icml24.core import index

    found = index.entries()
    results: dict[tuple[str, int], str] = {}
    check_store(store)  # one line for a path no file system takes, a folder or a foreign file; creates nothing
    if store.exists():
        with Store(store) as db:
            for slug in index.judged(found, db):
                try:
                    paper = registry.get_paper(slug)
                except ValueError:  # recorded in registry.BROKEN: warned below
                    continue
                for number, r in enumerate(evaluate_paper(paper, db), 1):
                    results[(slug, number)] = r.verdict.status
    console.print(_papers_table(found, results))
    for module, why in registry.BROKEN.items():
        err_console.print(f"[yellow]warning:[/] {module} failed to import: {escape(why)}", highlight=False)


_WIDE_CLAIM = 40  # list shows each claim's experiment only where the claim's column keeps at least this width


def _papers_table(found: dict[str, dict], results: dict[tuple[str, int], str]) -> Table:
    """One row per claim (its id within the paper, its last verdict, its text cut to the console's width)."""
    from rich import box

    rows = []  # paper (first row only), experiment, id, verdict, text, last row of its paper
    for slug, info in found.items():
        claims = info["claims"] or [None]
        for i, claim in enumerate(claims):
            if claim is None:
                rows.append((slug, ", ".join(e["name"] for e in info["experiments"]), "", "-", "(no claims)", True))
                continue
            status = results.get((slug, claim["id"]), "not run")
            rows.append((slug if i == 0 else "", claim["experiment"], str(claim["id"]), status, claim["text"],
                         i == len(claims) - 1))
    widths = [max([len(r[k]) for r in rows] + [len(head)]) for k, head in enumerate(("paper", "experiment", "#",
                                                                                      "verdict"))]
    # SIMPLE_HEAD: one space at each edge and a padding of 1 on either side of each column
    narrow_claim = console.width - (widths[0] + widths[2] + widths[3]) - (3 * 4 + 1)
    with_experiment = narrow_claim - widths[1] - 3 >= _WIDE_CLAIM
    claim_width = max(10, narrow_claim - (widths[1] + 3 if with_experiment else 0))
    n_claims = sum(len(info["claims"]) for info in found.values())
    table = Table(title=f"{len(found)} papers, {n_claims} claims", box=box.SIMPLE_HEAD,
                  caption=None if with_experiment else "each claim's experiment and whole text: icml24 show SLUG")
    table.add_column("paper", width=widths[0], no_wrap=True)
    if with_experiment:
        table.add_column("experiment", width=widths[1], no_wrap=True)
    table.add_column("#", width=widths[2], no_wrap=True, justify="right")
    table.add_column("verdict", width=widths[3], no_wrap=True)
    table.add_column("claim", width=claim_width, no_wrap=True, overflow="ellipsis")
    for paper, experiment, number, status, text, last in rows:
        cells = [paper] + ([experiment] if with_experiment else []) + [
            number, f"[{VERDICT_STYLE.get(status, 'dim')}]{status}[/]", escape(text)]
        table.add_row(*cells, end_section=last)
    return table


@app.command(short_help="One paper: authors, code, deviations, claims, nulls.")
def show(slug: str) -> None:
    """The paper record: authors, code, deviations, experiments and claims.

    Read from the papers' index, importing no paper unless its module changed since the index was written.
    """
    from icml24.core import index

    info = index.entry(slug)  # a typo is answered from file names
    console.print(f"[bold]{info['slug']}[/]: {escape(info['title'])}")
    console.print(escape(f"{info['authors']} — {info['venue']}  {info['code']}"), highlight=False)
    if info["extras"]:
        console.print(escape(f"Install: pip install 'icml24[{','.join(info['extras'])}]'"), highlight=False)
    if info["summary"]:
        console.print(escape(info["summary"]))
    if info["locations"]:
        console.print("\n[bold]Where the method lives[/] (the field modules its experiments use)")
        for home, names in info["locations"].items():
            console.print(escape(f"  {home}: {', '.join(names)}"), highlight=False)
    if info["deviations"]:
        console.print("\n[bold]Deviations from the paper[/]")
        for d in info["deviations"]:
            console.print(escape(f"  - {d}"), highlight=False)
    console.print("\n[bold]Experiments[/]")
    for exp in info["experiments"]:
        params = ", ".join(f"{k}: {kind}" for k, kind in exp["parameters"].items())
        console.print(escape(f"  {exp['name']}({params})  {exp['doc']}"), highlight=False)
        for name in ("quick", "full"):
            console.print(escape(f"    {name} ({exp['seeds'][name]} seed(s)): {exp['settings'][name]}"),
                          highlight=False)
    console.print("\n[bold]Claims[/]")
    for c in info["claims"]:
        null = c["null"]
        against = f"; null: {null['label']} {null['overrides']}" if null else "; no null declared"
        text = f"  #{c['id']} {c['text']}  (paper: {c['paper']}; experiment: {c['experiment']}{against})"
        console.print(escape(text), highlight=False)
    if info["regimes"]:
        console.print("\n[bold]Regime and property measurements[/] (shown beside the verdicts, never a verdict)")
        for m in info["regimes"]:
            console.print(escape(f"  - {m['text']}  ({', '.join(m['metrics'])} of {m['experiment']})"),
                          highlight=False)


@app.command(short_help="Run one paper (or experiment) and check its claims.")
def run(target: str = typer.Argument(..., help="SLUG or SLUG:EXPERIMENT"),
        full: bool = FullOpt,
        seed: int | None = typer.Option(None, "--seed", help="One seed (default: the setting's declared seeds)."),
        seeds: str | None = typer.Option(None, "--seeds", help="Seed list, e.g. 0-4 or 0,2,5 (default: the "
                                         "setting's declared seeds, 0..n-1)."),
        set_: list[str] = typer.Option([], "--set", help="Override a parameter: --set key=value (repeatable)."),
        store: Path = StoreOpt, jobs: int = JobsOpt, backend: Backend = BackendOpt, address: str | None = AddressOpt,
        force: bool = ForceOpt, json_out: Path | None = JsonOpt, yes: bool = YesOpt, dry_run: bool = DryRunOpt,
        null: bool = NullOpt, oracle: bool = OracleOpt, family: bool = FamilyOpt) -> None:
    """Run one paper's experiments (or one experiment) and check its claims (with --null / --oracle: against their
    nulls / oracles; with --family: over their instance families)."""
    experiments = _resolve(target)
    seed_list = _seed_list(seed, seeds)
    grids = {exp.key: parse_grid(exp, set_, allow_lists=False) for exp in experiments} if set_ else {}
    controls = tuple(name for name, on in (("null", null), ("oracle", oracle), ("family", family)) if on)
    if len(controls) > 1:
        raise ValueError("give one of --null, --oracle and --family per run")
    if controls:
        setting = "full" if full else "quick"
        grid_of = {e.key: control_grid(e, grids.get(e.key), controls, setting=setting) for e in experiments}
        without = [e.key for e in experiments if not grid_of[e.key]]
        experiments = [e for e in experiments if grid_of[e.key]]
        if not experiments:
            raise ValueError(f"{target} {CONTROL[controls[0]][0]}; nothing to run")
        if without:
            console.print(f"{CONTROL[controls[0]][0]} (skipped): {', '.join(without)}", highlight=False)
        grids = grid_of
    check_output(json_out, "--json")
    db, tasks = _execute(experiments, seed_list, full, lambda e: grids.get(e.key), store, backend, jobs, address,
                         force, yes, dry_run)
    if db is None:
        return
    if controls in (("null",), ("oracle",)):
        pick = (lambda c: c.resolved_null) if null else (lambda c: c.resolved_oracle)
        results = null_claims_for_tasks(db, tasks, registry.registered(), pick)
        claims_table(console, results, title=CONTROL[controls[0]][1])
        wrong = [r for r in results if r.verdict.status == ("holds" if null else "fails")]
        if wrong:
            why = ("hold for their null: their verdict does not tell the method from it" if null else
                   "fail for their oracle: a bar no method can reach (fix the bar or the metric)")
            err_console.print(f"[yellow]warning:[/] {len(wrong)} claim(s) {why}", highlight=False)
    elif family:
        results = family_claims_for_tasks(db, tasks, registry.registered())
        claims_table(console, results, title=CONTROL["family"][1])
    else:
        results = claims_for_tasks(db, tasks, registry.registered())
        claims_table(console, results)
    _write_json(json_out, results)
    _finish(db)


@app.command(short_help="Every paper at quick (or --full), nulls, then the report.")
def reproduce(full: bool = FullOpt,
              only: str | None = typer.Option(None, "--only", help="Comma-separated paper slugs."),
              seeds: str | None = typer.Option(None, "--seeds", help="Seeds of every experiment, e.g. 0-2 "
                                               "(default: each setting's declared seeds)."),
              store: Path = StoreOpt, jobs: int = JobsOpt, backend: Backend = BackendOpt,
              address: str | None = AddressOpt, force: bool = ForceOpt, json_out: Path | None = JsonOpt,
              out: Path | None = typer.Option(None, "--out", help="Report folder (default: beside the store)."),
              yes: bool = YesOpt, dry_run: bool = DryRunOpt,
              nulls: bool = typer.Option(True, "--nulls/--no-nulls", help="Also run the cheap nulls (those costing "
                                         "under a fifth of the experiment), shown beside each claim."),
              controls: bool = typer.Option(True, "--controls/--no-controls", help="Also run the cheap oracles "
                                            "and the members of the cheap instance families.")) -> None:
    """Every experiment of every paper (resuming what is stored), its cheap nulls, oracles and instance families,
    then the report."""
    if only is not None:
        slugs = list(dict.fromkeys(s.strip() for s in only.split(",") if s.strip()))  # a repeated slug runs once
        if not slugs:
            raise ValueError("--only names no paper; write e.g. --only rp,e4 (or leave it out for every paper)")
        found = {slug: registry.get_paper(slug) for slug in slugs}
    else:
        found = papers()
        slugs = list(found)
    experiments = [exp for slug in slugs for exp in found[slug].experiments.values()]
    seed_list = _seed_list(None, seeds)
    check_output(json_out, "--json")
    check_output_folder(out)
    def grid_for(exp: Experiment) -> list[dict] | None:
        chosen = (("null",) if nulls else ()) + (("oracle", "family") if controls else ())
        cheap = [o for o in control_grid(exp, None, chosen, cheap_only=True, setting=exp.setting(full)) if o]
        return [{}, *cheap] if cheap else None

    db, _ = _execute(experiments, seed_list, full, grid_for, store, backend, jobs, address, force, yes, dry_run)
    if db is None:
        return
    results = [r for slug in slugs for r in evaluate_paper(found[slug], db, full)]
    claims_table(console, results)
    _write_json(json_out, results)
    _report({s: found[s] for s in slugs}, db, out or db.folder)
    _finish(db)


@app.command(short_help="Write REPORT.md and report/index.html from the store.")
def report(store: Path = StoreOpt,
           out: Path | None = typer.Option(None, "--out", help="Folder for REPORT.md and report/index.html.")
           ) -> None:
    """Write REPORT.md and report/index.html from the store (with no store of its own: the results snapshot)."""
    check_writable_folder(store, "--store")  # first: a name too long for the file system is one line
    snapshot = not store.exists() and store == DEFAULT_STORE and any(SNAPSHOT_FOLDER.glob("*.json"))
    if not store.exists() and not snapshot:
        raise FileNotFoundError(f"no results store at {store}; run `icml24 reproduce` first or pass --store")
    check_output_folder(out)
    with snapshot_store(papers(), SNAPSHOT_FOLDER)[0] if snapshot else Store(store) as db:
        _report(papers(), db, out or (store.parent if snapshot else db.folder))


def _report(found: dict[str, Paper], db: Store, out: Path) -> None:
    from icml24.core.report import write_report

    md, page = write_report(found, db, out)
    console.print(f"report: {md} and {page}")


@app.command(short_help="Write the results snapshot (results-snapshot/) from a store.")
def snapshot(store: Path = StoreOpt, command: str = typer.Option(..., "--command", help="The command that made the "
                                                                "runs, kept as their provenance."),
             out: Path = typer.Option(SNAPSHOT_FOLDER, "--out", help="The snapshot folder.")) -> None:
    """Add every run of the current code in the store to the snapshot (one JSON file per paper, with provenance)."""
    if not store.exists():
        raise FileNotFoundError(f"no results store at {store}; run `icml24 reproduce` first or pass --store")
    with Store(store) as db:
        written = write_snapshot(db, papers(), command, out)
    console.print(f"snapshot of {len(written)} paper(s) written to {out}", highlight=False)


@app.command(short_help="A grid of settings x seeds on a process pool or Ray.")
def sweep(target: str = typer.Argument(..., help="SLUG:EXPERIMENT"),
          seeds: str | None = typer.Option(None, "--seeds", help="Seed list, e.g. 0-99 (default: the setting's "
                                           "declared seeds)."),
          set_: list[str] = typer.Option([], "--set", help="Grid axis: --set key=a,b,c (repeatable; for a list "
                                         "parameter, grid points are separated by ';')."),
          full: bool = FullOpt, store: Path = StoreOpt, jobs: int = JobsOpt, backend: Backend = BackendOpt,
          address: str | None = AddressOpt, force: bool = ForceOpt, json_out: Path | None = JsonOpt,
          yes: bool = YesOpt, dry_run: bool = DryRunOpt) -> None:
    """A grid of settings x seeds, resumable, on a process pool or a Ray cluster."""
    experiments = _resolve(target)
    if len(experiments) != 1:
        raise ValueError(f"sweep takes one experiment, SLUG:EXPERIMENT; {target!r} names {len(experiments)}")
    exp = experiments[0]
    grid = parse_grid(exp, set_, allow_lists=True)
    seed_list = _seed_list(None, seeds)
    check_output(json_out, "--json")
    db, tasks = _execute([exp], seed_list, full, lambda e: grid, store, backend, jobs, address, force, yes, dry_run)
    if db is None:
        return
    results = claims_for_tasks(db, tasks, registry.registered())
    claims_table(console, results)
    configs = {config_hash(t.config): t.config for t in tasks}
    extra = [{**r.as_json(), "config": configs[config_hash(r.records[0].config)]} if r.records else r.as_json()
             for r in results]
    _write_json(json_out, [], extra)
    _finish(db)


def main(argv: list[str] | None = None) -> int:
    """Entry point: user errors become one red line on stderr and exit status 2."""
    try:
        result = app(args=argv, prog_name="icml24", standalone_mode=False)
    except (ValueError, FileNotFoundError) as exc:  # escaped: "pip install 'icml24[graph]'" is text, not markup
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return 2
    except (click.exceptions.UsageError, _typer_click.UsageError) as exc:
        err_console.print(f"[red]error:[/] {exc.format_message()}", highlight=False, soft_wrap=True)
        return 2
    except (click.exceptions.Abort, getattr(_typer_click, "Abort", click.exceptions.Abort), KeyboardInterrupt):
        result = 130
    except RunsFailed as exc:
        err_console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return 1
    if result == 130:  # Ctrl-C (Typer turns it into exit status 130); one line, unless the runner already said it
        _ignore_further_interrupts()
        if not _INTERRUPT_REPORTED:
            err_console.print("[red]interrupted[/]: what finished is stored; run the same command again to resume",
                              highlight=False, soft_wrap=True)
    return result if isinstance(result, int) else 0


def _ignore_further_interrupts() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C cannot turn the closing line into a traceback


if __name__ == "__main__":
    sys.exit(main())
