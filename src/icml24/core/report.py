"""The report: ``REPORT.md`` and a static ``report/index.html`` with figures, built from the store only."""

from __future__ import annotations

import datetime as dt
import html
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

from icml24.core.controls import NoOracle, SingleInstance
from icml24.core.registry import Experiment, Paper, Regime
from icml24.core.report_figures import FigureSet, seed_figures, write_figure_set
from icml24.core.store import RunRecord, Store
from icml24.core.summary import parity_text, plot_verdict_matrix, summarize
from icml24.core.sweeps import SweepPoint, plot_sweep, sweep_points, swept_axis
from icml24.core.verdicts import ClaimResult, aggregate, canonical_records, evaluate_paper, evaluate_side_by_side

_BADGE = {"holds": "✅ holds", "fails": "❌ fails", "error": "⚠️ error", "not run": "… not run"}
_COLOR = {"holds": "#1a7f37", "fails": "#cf222e", "error": "#9a6700", "not run": "#656d76"}


def fmt(value: float) -> str:
    """Compact number formatting for tables."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return f"{value:.4g}"
    return f"{value:.3g}"


@dataclass
class ExperimentSection:
    experiment: Experiment
    name: str
    doc: str
    mode: str  # the setting the runs were made with, as stored with them
    records: list[RunRecord]
    figures: list[FigureSet]  # every seed's figures, by name; the report shows each seed (write_figure_set)
    sweeps: list[SweepPoint]


@dataclass
class RegimeRow:
    """A regime or property measurement: no verdict, its values beside what the paper reports."""

    regime: Regime
    mode: str
    values: str


@dataclass
class PaperSection:
    paper: Paper
    claims: list[ClaimResult]
    experiments: list[ExperimentSection]
    regimes: list[RegimeRow]


def collect(papers: dict[str, Paper], store: Store, full: bool | None = None) -> list[PaperSection]:
    """Everything the report shows, read from the store."""
    sections = []
    for paper in papers.values():
        experiments = []
        for exp in paper.experiments.values():
            mode, records = canonical_records(store, exp, full)
            ok = [r for r in records if r.status == "ok"]
            figures = seed_figures(ok, store.folder)
            experiments.append(ExperimentSection(exp, exp.name, exp.doc.splitlines()[0] if exp.doc else "", mode,
                                                 ok or records, figures, sweep_points(store, exp)))
        claims = evaluate_side_by_side(paper, store) if full is None else evaluate_paper(paper, store, full)
        sections.append(PaperSection(paper, claims, experiments,
                                     [_regime_row(m, store, full) for m in paper.regimes]))
    return sections


def _regime_row(regime: Regime, store: Store, full: bool | None) -> RegimeRow:
    mode, records = canonical_records(store, regime.experiment, full)
    ok = [r for r in records if r.status == "ok"]
    if not ok:
        return RegimeRow(regime, mode, "not run")
    try:
        summary = aggregate(ok, regime.experiment)
    except Exception:  # a broken summarize shows as an error verdict elsewhere; show the plain means here
        summary = aggregate(ok)
    parts = []
    for key in regime.metrics:
        if key not in summary:
            parts.append(f"{key} = (not measured)")
            continue
        std = summary.get(f"{key}_std")
        parts.append(f"{key} = {fmt(summary[key])}" + (f" ± {fmt(std)}" if std else ""))
    return RegimeRow(regime, mode, ", ".join(parts))


def sweep_rows(points: list[SweepPoint]) -> list[tuple[str, int, str]]:
    """(changed parameters, seeds, claim verdicts with what they read) per swept configuration."""
    rows = []
    for point in points:
        changed = ", ".join(f"{k}={v}" for k, v in point.changed.items()) or "(same values, other seeds)"
        verdicts = "; ".join(f"{r.verdict.status}: {measured_text(r)}" for r in point.claims)
        rows.append((changed, len(point.records), verdicts))
    return rows


def metrics_rows(records: list[RunRecord], exp: Experiment | None = None) -> list[tuple[str, str]]:
    """(metric, 'mean ± std') rows over the seeds of one experiment, with its across-seed summary."""
    ok = [r for r in records if r.status == "ok"]
    try:
        summary = aggregate(ok, exp)
    except Exception:  # a broken summarize shows as an error verdict; the table keeps the per-seed means
        summary = aggregate(ok)
    rows = []
    for key, mean in summary.items():
        if key.endswith("_std") or key == "num_seeds":
            continue
        std = summary.get(f"{key}_std")
        rows.append((key, fmt(mean) + (f" ± {fmt(std)}" if std else "")))
    return rows


def measured_text(result: ClaimResult) -> str:
    if result.verdict.status in ("error", "not run"):
        text = result.verdict.message
    else:
        text = ", ".join(f"{k} = {fmt(v)}" for k, v in result.verdict.measured.items())
    text = f"{text} [{result.mode}: {result.beside}]" if result.beside else text
    return f"{text} [{result.recorded}]" if result.recorded else text


def null_text(result: ClaimResult) -> str:
    """The null's verdict and what it measured, e.g. ``fails: feasible = 0.31 (an untrained generator)``."""
    null = result.claim.resolved_null
    if null is None:
        return "no null declared"
    if result.null is None:
        return f"not run ({null.label}: icml24 run {result.paper.slug}:{result.claim.experiment.name} --null)"
    return f"{result.null.verdict.status}: {measured_text(result.null)} ({null.label})"


def oracle_text(result: ClaimResult) -> str:
    """The oracle's verdict and what it measured, e.g. ``holds: tile_kl = 0.002 (the held-out levels)``."""
    oracle = result.claim.resolved_oracle
    if oracle is None:
        return "no oracle declared"
    if isinstance(oracle, NoOracle):
        return f"none possible: {oracle.reason}"
    if result.oracle is None:
        return f"not run ({oracle.label}: icml24 run {result.paper.slug}:{result.claim.experiment.name} --oracle)"
    return f"{result.oracle.verdict.status}: {measured_text(result.oracle)} ({oracle.label})"


def family_text(result: ClaimResult) -> str:
    """On how many instances of its family the claim holds, e.g. ``holds on 2 of 3 instances (needs 2; fails on:
    gaussian) (incoherence)``; a single-instance claim says why."""
    family = result.claim.resolved_family
    if family is None:
        return "no instance family declared"
    if isinstance(family, SingleInstance):
        return f"one instance: {family.reason}"
    command = f"icml24 run {result.paper.slug}:{result.claim.experiment.name} --family"
    found = result.family
    if found is None or found.status not in ("holds", "fails"):
        run = f"{len(found.judged)} of {len(found.members)} members judged; " if found is not None else ""
        return f"not run ({run}{family.label}: {command})"
    return f"{found.text()} ({family.label})"


def null_counts(sections: list[PaperSection], control: str = "null") -> dict[str, int]:
    """How many stored nulls fail as they should, how many hold (the claim does not discriminate), the rest
    (``control="oracle"``: the same counts of the stored oracles, which should hold)."""
    counts = {"fails": 0, "holds": 0, "other": 0}
    for section in sections:
        for r in section.claims:
            stored = getattr(r, control)
            if stored is not None:
                status = stored.verdict.status
                counts[status if status in counts else "other"] += 1
    return counts


def family_counts(sections: list[PaperSection]) -> dict[str, int]:
    """Claims read over their whole stored family, those with a family not (fully) stored, single-instance claims."""
    counts = {"read": 0, "partial": 0, "single": 0}
    for section in sections:
        for r in section.claims:
            family = r.claim.resolved_family
            if isinstance(family, SingleInstance):
                counts["single"] += 1
            elif family is not None:
                counts["read" if r.family is not None and r.family.status in ("holds", "fails") else "partial"] += 1
    return counts


def write_report(papers: dict[str, Paper], store: Store, out: str | Path = "results",
                 full: bool | None = None) -> tuple[Path, Path]:
    """Write ``<out>/REPORT.md`` and ``<out>/report/index.html`` (figures copied beside it)."""
    out = Path(out)
    html_dir = out / "report"
    figure_dir = html_dir / "figures"
    if figure_dir.exists():
        shutil.rmtree(figure_dir)
    figure_dir.mkdir(parents=True, exist_ok=True)
    sections = collect(papers, store, full)
    for section in sections:
        for exp in section.experiments:
            for figures in exp.figures:
                write_figure_set(figures, figure_dir, f"{section.paper.slug}-{exp.name}", len(exp.records))
            exp.figures = [f for f in exp.figures if f.file]
            axis = swept_axis(exp.sweeps)
            if axis is not None:
                plotted = plot_sweep(exp.sweeps, axis, figure_dir / f"{section.paper.slug}-{exp.name}-sweep-{axis}.png")
                if plotted is not None:
                    exp.figures.append(FigureSet(plotted.name, file=f"figures/{plotted.name}", caption=f"the sweep "
                                                 f"over {axis}: what each configuration's claims measured"))
    matrix = plot_verdict_matrix([(sec.paper.slug, sec.claims) for sec in sections], figure_dir / "verdicts.png")
    links = _Links(out)
    md_path = out / "REPORT.md"
    html_path = html_dir / "index.html"
    _write_atomically(md_path, _markdown(sections, links, matrix))  # a killed report leaves the old one
    _write_atomically(html_path, _html(sections, links, matrix))
    return md_path, html_path


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(text)
    os.replace(partial, path)


def _counts(sections: list[PaperSection]) -> dict[str, int]:
    counts = dict.fromkeys(_BADGE, 0)
    for section in sections:
        for result in section.claims:
            counts[result.verdict.status] += 1
    return counts


_REPOSITORY = Path(__file__).resolve().parents[3]  # the checkout (src/icml24/core/report.py); no docs when installed


class _Links:
    """Where a paper's user-guide page is, seen from the report written into ``out``: the site's ``site_url`` from
    mkdocs.yml when one is configured, else a path relative to ``out`` (REPORT.md: the markdown source; index.html:
    the built site of ``make docs`` when it exists, else the source); no link when the checkout has no page."""

    def __init__(self, out: Path, repository: Path = _REPOSITORY):
        self.out = Path(os.path.abspath(out))
        self.repository = repository
        self.site_url = _site_url(repository / "mkdocs.yml")

    def docs(self, slug: str, html: bool = False) -> str | None:
        source = self.repository / "docs" / "papers" / f"{slug}.md"
        if not source.is_file():
            return None
        if self.site_url:
            return f"{self.site_url.rstrip('/')}/papers/{quote(slug)}/"
        built = self.repository / "site" / "papers" / slug / "index.html"
        target = built if html and built.is_file() else source
        start = self.out / "report" if html else self.out
        return quote(Path(os.path.relpath(target, start)).as_posix())


def _site_url(mkdocs: Path) -> str | None:
    """mkdocs.yml's ``site_url`` when it is an http(s) URL (read as text: the file holds tags yaml would refuse)."""
    try:
        text = mkdocs.read_text()
    except OSError:
        return None
    found = re.search(r"^site_url:\s*['\"]?([^'\"\s#]+)", text, re.MULTILINE)
    return found.group(1) if found and _is_url(found.group(1)) else None


_URL = re.compile(r"https?://[^\s<>\"'()\[\]{},;|`]+")


def _is_url(text: str) -> bool:
    """An absolute http(s) URL with a host and nothing a link must not hold (spaces, quotes, brackets)."""
    parts = urlsplit(text)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and _URL.fullmatch(text) is not None


def _url_pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into (piece, is_url): the http(s) URLs it holds (trailing punctuation left out) and the rest."""
    pieces, at = [], 0
    for found in _URL.finditer(text):
        url = found.group(0).rstrip(".:!?")
        if not _is_url(url):
            continue
        pieces += [(text[at:found.start()], False), (url, True)]
        at = found.start() + len(url)
    return [(piece, is_url) for piece, is_url in [*pieces, (text[at:], False)] if piece]


def _code_md(code: str) -> str:
    """The paper's code field in Markdown: each URL in it a link, the rest text (escaped)."""
    return "".join(f"[{_md_cell(p)}]({p})" if is_url else _md_cell(p) for p, is_url in _url_pieces(code))


def _code_html(code: str) -> str:
    """The code field in HTML: a field that is one URL is a "code" link; else its text with each URL in it a link."""
    esc = html.escape
    if _is_url(code):
        return f" <a href='{esc(code)}'>code</a>"
    text = "".join(f"<a href='{esc(p)}'>{esc(p)}</a>" if is_url else esc(p) for p, is_url in _url_pieces(code))
    return f" Code: {text}" if text else ""


def _markdown(sections: list[PaperSection], links: _Links, matrix: Path | None = None) -> str:
    """REPORT.md. Every text from the store or a paper goes through ``_md_cell`` (HTML and Markdown escaped)."""
    md = _md_cell
    counts = _counts(sections)
    nulls, oracles, families = null_counts(sections), null_counts(sections, "oracle"), family_counts(sections)
    lines = [
        "# icml24 reproduction report",
        "",
        f"Generated {dt.datetime.now().strftime('%Y-%m-%d %H:%M')} from the results store. "
        f"Claims: {counts['holds']} hold, {counts['fails']} fail, {counts['error']} error, "
        f"{counts['not run']} not run.",
        "",
        f"Each claim is also run against its null (what the claim says the method beats, or nothing, in the "
        f"method's slot), which must fail. Stored nulls: {nulls['fails']} fail as they should, {nulls['holds']} "
        f"hold (that verdict does not tell the method from its null), {nulls['other']} error or not run.",
        "",
        _controls_sentence(oracles, families),
        "",
        "## At a glance",
        "",
        "| paper | claims | nulls (should fail) | parity with the official code | sections |",
        "|---|---|---|---|---|",
        *[f"| {md(sec.paper.slug)} | {md(summary.claims_text())} | {md(summary.nulls_text())} | "
          f"{md(parity_text(sec.paper.slug))} | [results](#{_anchor(sec.paper)})"
          + (f" · [docs]({docs})" if docs else "") + " |" for sec in sections
          for summary, docs in [(summarize(sec.paper, sec.claims), links.docs(sec.paper.slug))]],
        "",
        *(["![verdict matrix](report/figures/verdicts.png)", ""] if matrix is not None else []),
        "## Every claim",
        "",
        "| paper | claim | paper reports | we measured | verdict | instances | null (should fail) | "
        "oracle (should hold) | mode | seeds | time (s) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for section in sections:
        for r in section.claims:
            lines.append(
                f"| {md(section.paper.slug)} | {md(r.claim.text)} | {md(r.claim.paper)} | "
                f"{md(measured_text(r))} | {_BADGE[r.verdict.status]} | {md(family_text(r))} | {md(null_text(r))} | "
                f"{md(oracle_text(r))} | "
                f"{md(r.mode or '-')} | {r.num_seeds} | {r.seconds:.1f} |"
            )
    for section in sections:
        paper = section.paper
        lines += ["", f"## {md(paper.slug)}: {md(paper.title)}", ""]
        if paper.authors:
            lines.append(f"{md(paper.authors)}. {md(paper.venue)}." + (f" Code: {_code_md(paper.code)}"
                                                                      if paper.code else ""))
            lines.append("")
        if paper.summary:
            lines += [md(paper.summary), ""]
        if paper.deviations:
            lines += ["**Deviations from the paper**", ""] + [f"- {md(d)}" for d in paper.deviations] + [""]
        if section.regimes:
            lines += ["**Regime and property measurements** (no verdict)", "",
                      "| measurement | paper | we measured | mode |", "|---|---|---|---|"]
            lines += [f"| {md(m.regime.text)} | {md(m.regime.paper)} | {md(m.values)} | "
                      f"{md(m.mode or '-')} |" for m in section.regimes] + [""]
        for exp in section.experiments:
            lines.append(f"### {md(exp.name)} ({md(exp.mode or 'not run')})")
            if exp.doc:
                lines += ["", md(exp.doc)]
            rows = metrics_rows(exp.records, exp.experiment)
            errors = [r for r in exp.records if r.status == "error"]
            if rows:
                seconds = sum(r.seconds for r in exp.records) / max(len(exp.records), 1)
                memory = max(r.peak_rss_mb for r in exp.records)
                lines += ["", f"{len(exp.records)} seed(s), {seconds:.1f} s per seed, peak memory {memory:.0f} MB.", "",
                          "| metric | mean ± std |", "|---|---|"]
                lines += [f"| {md(k)} | {md(v)} |" for k, v in rows]
            elif errors:
                lines += ["", f"Error: {md(errors[-1].error.splitlines()[0])}"]
            if exp.sweeps:
                lines += ["", "Sweep (configurations besides the quick/full setting):", "",
                          "| changed | seeds | claims on this configuration |", "|---|---|---|"]
                lines += [f"| {md(c)} | {n} | {md(v)} |" for c, n, v in sweep_rows(exp.sweeps)]
            for figure in exp.figures:
                alt = md(Path(figure.name).stem).replace("[", "").replace("]", "")
                lines += ["", f"![{alt}](report/{quote(figure.file)})", "", f"*{md(figure.caption)}*"]
            lines.append("")
    return "\n".join(lines) + "\n"


def _controls_sentence(oracles: dict[str, int], families: dict[str, int]) -> str:
    return (f"Each claim is also run with its oracle (what a perfect method gives in the method's slot), which must "
            f"hold: stored oracles: {oracles['holds']} hold as they should, {oracles['fails']} fail (a bar no method "
            f"can reach), {oracles['other']} error or not run. A claim is read over its family of instances (holds on "
            f"k of n): {families['read']} claims read over their whole family, {families['partial']} with members "
            f"not run (judged on the experiment's own instance), {families['single']} single-instance claims.")


def _anchor(paper: Paper) -> str:
    """GitHub's anchor of the heading ``## slug: title``."""
    heading = f"{paper.slug}: {paper.title}".lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", heading))


def _md_cell(text: str) -> str:
    """``text`` as Markdown text on one line: HTML escaped (a stored ``<script>`` stays text, as in index.html),
    a table's ``|`` and a code span's backtick escaped."""
    return html.escape(str(text), quote=False).replace("|", "\\|").replace("`", "\\`").replace("\n", " ")


def _html(sections: list[PaperSection], links: _Links, matrix: Path | None = None) -> str:
    esc = html.escape
    counts = _counts(sections)
    nulls, oracles, families = null_counts(sections), null_counts(sections, "oracle"), family_counts(sections)
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>icml24 report</title><style>",
        "body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#1f2328}",
        "table{border-collapse:collapse;margin:1em 0;font-size:14px}td,th{border:1px solid #d0d7de;padding:4px 8px;"
        "vertical-align:top}th{background:#f6f8fa}.v{font-weight:600;white-space:nowrap}img{max-width:560px;margin:4px}"
        ".dev{background:#fff8c5;padding:6px 12px;border-radius:6px}code{font-size:12px}"
        "figure{margin:1em 0}figure img{max-width:900px}figcaption{font-size:13px;color:#656d76}",
        "</style></head><body><h1>icml24 reproduction report</h1>",
        f"<p>Generated {esc(dt.datetime.now().strftime('%Y-%m-%d %H:%M'))}. Claims: "
        f"<span style='color:{_COLOR['holds']}'>{counts['holds']} hold</span>, "
        f"<span style='color:{_COLOR['fails']}'>{counts['fails']} fail</span>, "
        f"<span style='color:{_COLOR['error']}'>{counts['error']} error</span>, "
        f"<span style='color:{_COLOR['not run']}'>{counts['not run']} not run</span>.</p>",
        f"<p>Each claim is also run against its null (what it says the method beats, or nothing, in the method's "
        f"slot), which must fail. Stored nulls: {nulls['fails']} fail as they should, {nulls['holds']} hold (that "
        f"verdict does not tell the method from its null), {nulls['other']} error or not run.</p>",
        f"<p>{esc(_controls_sentence(oracles, families))}</p>",
        "<h2>At a glance</h2><table><tr><th>paper</th><th>claims</th><th>nulls (should fail)</th>"
        "<th>parity with the official code</th><th>sections</th></tr>",
        *[f"<tr><td>{esc(sec.paper.slug)}</td><td>{esc(summary.claims_text())}</td>"
          f"<td>{esc(summary.nulls_text())}</td><td>{esc(parity_text(sec.paper.slug))}</td>"
          f"<td><a href='#{esc(sec.paper.slug)}'>results</a>"
          + (f" · <a href='{esc(docs)}'>docs</a>" if docs else "") + "</td></tr>"
          for sec in sections
          for summary, docs in [(summarize(sec.paper, sec.claims), links.docs(sec.paper.slug, html=True))]],
        "</table>",
        *(["<img src='figures/verdicts.png' alt='verdict matrix'>"] if matrix is not None else []),
        "<h2>Every claim</h2>",
        "<table><tr><th>paper</th><th>claim</th><th>paper reports</th><th>we measured</th><th>verdict</th>"
        "<th>instances</th><th>null (should fail)</th><th>oracle (should hold)</th><th>mode</th><th>seeds</th>"
        "<th>time (s)</th></tr>",
    ]
    for section in sections:
        for r in section.claims:
            status = r.verdict.status
            parts.append(
                f"<tr><td><a href='#{esc(section.paper.slug)}'>{esc(section.paper.slug)}</a></td>"
                f"<td>{esc(r.claim.text)}</td><td>{esc(r.claim.paper)}</td><td>{esc(measured_text(r))}</td>"
                f"<td class='v' style='color:{_COLOR[status]}'>{esc(status)}</td><td>{esc(family_text(r))}</td>"
                f"<td>{esc(null_text(r))}</td><td>{esc(oracle_text(r))}</td>"
                f"<td>{esc(r.mode or '-')}</td>"
                f"<td>{r.num_seeds}</td><td>{r.seconds:.1f}</td></tr>"
            )
    parts.append("</table>")
    for section in sections:
        paper = section.paper
        parts.append(f"<h2 id='{esc(paper.slug)}'>{esc(paper.slug)}: {esc(paper.title)}</h2>")
        if paper.authors:
            parts.append(f"<p>{esc(paper.authors)}. {esc(paper.venue)}.{_code_html(paper.code)}</p>")
        if paper.summary:
            parts.append(f"<p>{esc(paper.summary)}</p>")
        if paper.deviations:
            parts.append("<div class='dev'><b>Deviations from the paper</b><ul>"
                         + "".join(f"<li>{esc(d)}</li>" for d in paper.deviations) + "</ul></div>")
        if section.regimes:
            parts.append("<p><b>Regime and property measurements</b> (no verdict)</p><table><tr><th>measurement</th>"
                         "<th>paper</th><th>we measured</th><th>mode</th></tr>"
                         + "".join(f"<tr><td>{esc(m.regime.text)}</td><td>{esc(m.regime.paper)}</td>"
                                   f"<td>{esc(m.values)}</td><td>{esc(m.mode or '-')}</td></tr>"
                                   for m in section.regimes) + "</table>")
        for exp in section.experiments:
            parts.append(f"<h3>{esc(exp.name)} <small>({esc(exp.mode or 'not run')})</small></h3>")
            if exp.doc:
                parts.append(f"<p>{esc(exp.doc)}</p>")
            rows = metrics_rows(exp.records, exp.experiment)
            errors = [r for r in exp.records if r.status == "error"]
            if rows:
                seconds = sum(r.seconds for r in exp.records) / max(len(exp.records), 1)
                parts.append(f"<p>{len(exp.records)} seed(s), {seconds:.1f} s per seed.</p><table>"
                             "<tr><th>metric</th><th>mean ± std</th></tr>"
                             + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in rows) + "</table>")
            elif errors:
                parts.append(f"<p>Error: <code>{esc(errors[-1].error.splitlines()[0])}</code></p>")
            if exp.sweeps:
                parts.append("<p>Sweep (configurations besides the quick/full setting):</p><table><tr><th>changed</th>"
                             "<th>seeds</th><th>claims on this configuration</th></tr>"
                             + "".join(f"<tr><td>{esc(c)}</td><td>{n}</td><td>{esc(v)}</td></tr>"
                                       for c, n, v in sweep_rows(exp.sweeps)) + "</table>")
            parts += [f"<figure><img src='{esc(quote(f.file))}' alt='{esc(Path(f.name).stem)}'>"
                      f"<figcaption>{esc(f.caption)}</figcaption></figure>" for f in exp.figures]
    parts.append("</body></html>")
    return "\n".join(parts)
