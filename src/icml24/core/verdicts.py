"""Claim verdicts computed from stored runs: metrics averaged over seeds (plus the experiment's across-seed
summary), then each claim's check."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from icml24.core.controls import Family, Oracle, _Slot
from icml24.core.registry import Claim, Experiment, Paper, Verdict
from icml24.core.store import RunRecord, Store, config_hash
from icml24.core.versioning import code_version

NOT_RUN = "not run"
MISSING_METRIC = "the experiment returned no metric"  # Claim.evaluate's message for a check reading an absent key


@dataclass
class ClaimResult:
    """A claim, its verdict, and the runs it rests on."""

    paper: Paper
    claim: Claim
    verdict: Verdict
    mode: str = ""
    num_seeds: int = 0
    seconds: float = 0.0
    records: list[RunRecord] = field(default_factory=list, repr=False)
    null: ClaimResult | None = None  # the same claim judged on its null's runs, when stored
    recorded: str = ""  # the recorded run's label (core/records.py) when the verdict rests on one, not the store
    oracle: ClaimResult | None = None  # the same claim judged on its oracle's runs, when stored
    family: FamilyResult | None = None  # the claim judged on each member of its instance family
    instance: Verdict | None = None  # the verdict on the experiment's own instance, where the family's replaced it
    beside: str = ""  # the claim's verdict at the other setting (quick beside full), when both are stored

    def as_json(self) -> dict:
        null, oracle = self.claim.resolved_null, self.claim.resolved_oracle
        return {
            "paper": self.paper.slug,
            "experiment": self.claim.experiment.name,
            "claim": self.claim.text,
            "verdict": self.verdict.status,
            "measured": self.verdict.measured,
            "message": self.verdict.message,
            "paper_value": self.claim.paper,
            "mode": self.mode,
            "seeds": self.num_seeds,
            "seconds": round(self.seconds, 3),
            "recorded": self.recorded,
            "null": None if null is None else {
                "label": null.label, "overrides": null.overrides,
                "verdict": self.null.verdict.status if self.null else NOT_RUN,
                "measured": self.null.verdict.measured if self.null else {},
                "message": self.null.verdict.message if self.null else "no stored run of the null",
                "seeds": self.null.num_seeds if self.null else 0,
            },
            "oracle": _slot_json(oracle, self.oracle, "oracle"),
            "instance_verdict": (self.instance or self.verdict).status,
            "family": self.family.as_json() if self.family is not None else _single_json(self.claim),
        }


def _slot_json(slot, result: ClaimResult | None, kind: str) -> dict | None:
    if slot is None:
        return None
    if not isinstance(slot, _Slot):  # NoOracle: the stated reason
        return {"label": None, "none": slot.reason, "verdict": "none"}
    return {"label": slot.label, "overrides": slot.overrides,
            "verdict": result.verdict.status if result else NOT_RUN,
            "measured": result.verdict.measured if result else {},
            "message": result.verdict.message if result else f"no stored run of the {kind}",
            "seeds": result.num_seeds if result else 0}


def _single_json(claim: Claim) -> dict | None:
    """The family field of a claim whose family was not judged: a single instance's reason, or nothing run."""
    family = claim.resolved_family
    if isinstance(family, Family):
        return {"label": family.label, "share": family.share, "verdict": NOT_RUN, "holds": 0,
                "of": len(family.members), "required": family.required(len(family.members)), "members": []}
    return None if family is None else {"label": None, "single_instance": family.reason}


@dataclass
class FamilyResult:
    """A claim judged on every member of its instance family: per member the verdict on its stored runs."""

    family: Family
    members: dict[str, ClaimResult]  # member name -> the claim judged on that member's runs

    @property
    def out_of_scope(self) -> list[str]:
        """Members whose check found the instance outside the claim's regime (``OutOfRegime``): judged, not holding
        (the claim's share counts the members in its scope among all of them)."""
        return [m for m, r in self.members.items()
                if r.verdict.status == NOT_RUN and r.verdict.message.startswith("out of regime")]

    @property
    def judged(self) -> list[str]:
        return [m for m, r in self.members.items() if r.verdict.status in ("holds", "fails")] + self.out_of_scope

    @property
    def holding(self) -> list[str]:
        return [m for m, r in self.members.items() if r.verdict.status == "holds"]

    @property
    def required(self) -> int:
        return self.family.required(len(self.members))

    @property
    def status(self) -> str:
        """holds / fails once every member is judged (at least ``required`` of them hold); else error / not run."""
        if len(self.judged) == len(self.members):
            return "holds" if len(self.holding) >= self.required else "fails"
        return "error" if any(r.verdict.status == "error" for r in self.members.values()) else NOT_RUN

    def text(self) -> str:
        """e.g. ``holds on 2 of 3 instances (needs 2; fails on: gaussian)``."""
        n = len(self.members)
        failing = [m for m, r in self.members.items() if r.verdict.status == "fails"]
        scope = self.out_of_scope
        rest = [f"{m}: {r.verdict.status}" for m, r in self.members.items() if r.verdict.status not in
                ("holds", "fails") and m not in scope]
        parts = ([f"needs {self.required}"] + ([f"fails on: {', '.join(failing)}"] if failing else [])
                 + ([f"out of the claim's scope: {', '.join(scope)}"] if scope else []) + rest)
        return f"holds on {len(self.holding)} of {n} instances ({'; '.join(parts)})"

    def as_json(self) -> dict:
        return {"label": self.family.label, "share": self.family.share, "verdict": self.status,
                "holds": len(self.holding), "of": len(self.members), "required": self.required,
                "members": [{"name": m, "verdict": r.verdict.status, "measured": r.verdict.measured,
                             "message": r.verdict.message, "seeds": r.num_seeds} for m, r in self.members.items()]}


def aggregate(records: list[RunRecord], exp: Experiment | None = None) -> dict[str, float]:
    """Mean of each metric over runs, ``<key>_std`` beside it (unless the run reported one), ``num_seeds``,
    and the experiment's ``summarize`` of the per-seed metrics (its keys take precedence over the means).

    A ``summarize`` that raises propagates: the caller reports it as an error verdict.
    """
    if not records:
        return {}
    records = sorted(records, key=lambda r: r.seed)
    keys = sorted(set().union(*(r.metrics for r in records)))
    summary: dict[str, float] = {}
    for key in keys:
        values = np.array([r.metrics[key] for r in records if key in r.metrics], dtype=float)
        summary[key] = float(values.mean())
        if f"{key}_std" not in keys and not key.endswith("_std"):
            summary[f"{key}_std"] = float(values.std(ddof=1)) if len(values) > 1 else 0.0
    summary["num_seeds"] = float(len(records))
    if exp is not None and exp.summarize is not None:
        across = exp.summarize([dict(r.metrics) for r in records])
        summary.update({str(k): float(v) for k, v in across.items()})
    return summary


def canonical_records(store: Store, exp: Experiment, full: bool | None = None) -> tuple[str, list[RunRecord]]:
    """Runs of ``exp`` at its own quick/full setting and the current code version, and that setting's name.

    The setting is the one each run was made with (stored with it), not guessed from its configuration: a quick and
    a full setting that differ only in their seed counts have one configuration, and a quick run with more seeds is
    still quick. With ``full=None`` the full setting is used when it has stored runs, else the quick one.
    """
    version = code_version(exp)
    modes = ["full", "quick"] if full is None else ["full" if full else "quick"]
    for mode in modes:
        config = exp.config(setting=mode)
        records = store.records(exp.paper.slug, exp.name, config=config, code_version=version, mode=mode)
        if records:
            return mode, records
    return "", []


def judge(paper: Paper, claim: Claim, records: list[RunRecord], mode: str) -> ClaimResult:
    """The verdict of ``claim`` on the runs of one configuration.

    No runs: ``not run``. Any seed errored: ``error`` (a verdict never rests silently on the seeds that worked).
    Otherwise the check on the aggregate of all seeds.
    """
    ok = [r for r in records if r.status == "ok"]
    failed = [r for r in records if r.status != "ok"]
    seconds = sum(r.seconds for r in records)
    if not records:
        return ClaimResult(paper, claim, Verdict(NOT_RUN, {}, "no stored run of the experiment"), mode)
    if claim.setting == "full" and mode != "full":
        exp = claim.experiment
        message = f"reads the full setting only: icml24 run {exp.paper.slug}:{exp.name} --full"
        return ClaimResult(paper, claim, Verdict(NOT_RUN, {}, message), mode)
    if failed:
        first = failed[0]
        first_line = first.error.splitlines()[0] if first.error else "unknown error"
        message = f"{len(failed)} of {len(records)} seed(s) failed (seed {first.seed}: {first_line})"
        return ClaimResult(paper, claim, Verdict("error", {}, message), mode, len(ok), seconds, records)
    try:
        metrics = aggregate(ok, claim.experiment)
    except Exception as exc:  # a broken summarize is reported, not raised
        verdict = Verdict("error", {}, f"summarize failed: {type(exc).__name__}: {exc}")
    else:
        verdict = claim.evaluate(metrics)
    return ClaimResult(paper, claim, verdict, mode, len(ok), seconds, records)


def null_records(store: Store, exp: Experiment, null: _Slot, mode: str) -> list[RunRecord]:
    """Runs of ``null`` in ``exp``'s slot at the canonical ``mode`` ("quick" or "full") and the current code."""
    config = exp.null_config(null, setting=mode)
    return store.records(exp.paper.slug, exp.name, config=config, code_version=code_version(exp), mode=mode)


def judge_null(paper: Paper, claim: Claim, store: Store, mode: str, null: _Slot | None = None) -> ClaimResult | None:
    """The claim judged on its null's (or the given oracle's) stored runs at ``mode`` (``None`` when none is stored
    or none declared).

    With no mode (the method itself not run) the full null runs are used when stored, else the quick ones.
    """
    null = null if null is not None else claim.resolved_null
    if null is None:
        return None
    for candidate in ([mode] if mode else ["full", "quick"]):
        records = null_records(store, claim.experiment, null, candidate)
        if records:
            return judge(paper, claim, records, candidate)
    return None


def judge_oracle(paper: Paper, claim: Claim, store: Store, mode: str) -> ClaimResult | None:
    """The claim judged on its oracle's stored runs at ``mode`` (``None`` when none is stored or none declared)."""
    oracle = claim.resolved_oracle
    return judge_null(paper, claim, store, mode, oracle) if isinstance(oracle, Oracle) else None


def judge_family(paper: Paper, claim: Claim, store: Store, mode: str) -> FamilyResult | None:
    """The claim judged on each member of its instance family at ``mode`` (quick or full; the experiment's own
    instance is the ``{}`` member and shares its runs); ``None`` for a claim with no family."""
    family = claim.resolved_family
    if not isinstance(family, Family) or mode not in ("quick", "full", "smoke"):
        return None
    exp = claim.experiment
    members = {}
    for member in family.at(mode):
        config = exp.member_config(family, member, mode)
        records = store.records(paper.slug, exp.name, config=config, code_version=code_version(exp), mode=mode)
        members[member] = judge(paper, claim, records, mode)
    return FamilyResult(family, members)


def read_family(result: ClaimResult, family: FamilyResult | None) -> ClaimResult:
    """Attach ``family``; once every member is judged the claim's verdict is the family's (the instance's verdict
    is kept in ``instance``)."""
    result.family = family
    if family is not None and family.status in ("holds", "fails") and result.verdict.status in ("holds", "fails"):
        result.instance = result.verdict
        result.verdict = Verdict(family.status, result.verdict.measured, family.text())
    return result


def evaluate_paper(paper: Paper, store: Store, full: bool | None = None) -> list[ClaimResult]:
    """The verdict of every claim of ``paper`` from what ``store`` holds at the canonical settings, each with its
    null's and its oracle's verdicts beside it when their runs are stored, and read over its instance family when
    every member's runs are stored."""
    results = []
    for claim in paper.claims:
        mode, records = canonical_records(store, claim.experiment, full)
        result = judge(paper, claim, records, mode)
        if claim.setting == "full" and mode != "full":
            result = judge_recorded(paper, claim) or result
        control_mode = mode or ({True: "full", False: "quick"}.get(full, ""))
        result.null = judge_null(paper, claim, store, control_mode)
        result.oracle = judge_oracle(paper, claim, store, control_mode)
        family_mode = "full" if result.mode.startswith("full") and not result.recorded else (mode or "quick")
        results.append(read_family(result, judge_family(paper, claim, store, family_mode)))
    return results



def evaluate_side_by_side(paper: Paper, store: Store) -> list[ClaimResult]:
    """``evaluate_paper`` at the canonical settings (full where stored), each claim judged at full also saying its
    quick verdict (``beside``), and a full verdict on fewer seeds than the full setting declares saying how many."""
    results = evaluate_paper(paper, store)
    for result, quick in zip(results, evaluate_paper(paper, store, full=False), strict=True):
        if not result.mode.startswith("full") or result.recorded:
            continue
        declared = len(result.claim.experiment.default_seeds(setting="full"))
        partial = f"{result.num_seeds} of the full setting's {declared} seeds; " if result.num_seeds < declared else ""
        quick_text = f"quick: {quick.verdict.status}" if quick.mode == "quick" else "no quick run stored"
        result.beside = f"{partial}{quick_text}"
    return results


def judge_recorded(paper: Paper, claim: Claim) -> ClaimResult | None:
    """A full-only claim judged by its own check on the experiment's recorded full run (``core/records.py``), when
    the repository keeps one; labelled as such (and stale when the code changed since)."""
    from icml24.core.records import changed_parameters, label, load_recorded

    try:
        run = load_recorded(claim.experiment)
    except ValueError as exc:  # a malformed record is an error verdict, as a broken summarize is
        return ClaimResult(paper, claim, Verdict("error", {}, str(exc)), "full (recorded)")
    if run is None:
        return None
    result = judge(paper, claim, run.records, "full")
    result.mode, result.recorded = "full (recorded)", label(run, claim.experiment)
    if changed_parameters(run, claim.experiment) and result.verdict.message.startswith(MISSING_METRIC):
        # a recorded part of the setting (one rate of several, say) that lacks what the claim reads: not run, not error
        read = ", ".join(f"{k} = {v:.4g}" for k, v in result.verdict.measured.items())
        read = f"; it recorded {read}" if read else ""
        result.verdict = Verdict(NOT_RUN, result.verdict.measured,
                                 f"{result.verdict.message} (the recorded run covers part of the setting){read}")
    return result


def claims_of(exp: Experiment) -> list[Claim]:
    """The claims that rest on ``exp``."""
    return [c for c in exp.paper.claims if c.experiment is exp]


def claims_for_tasks(store: Store, tasks: Iterable, papers: dict[str, Paper]) -> list[ClaimResult]:
    """Verdicts of the claims resting on each (experiment, configuration) group just run, over its seeds."""
    groups: dict[tuple[str, str, str], list] = {}
    for task in tasks:
        groups.setdefault((task.paper, task.experiment, config_hash(task.config)), []).append(task)
    results = []
    for (slug, name, _), group in groups.items():
        first = group[0]
        exp = papers[slug].experiments[name]
        seeds = {t.seed for t in group}
        records = [r for r in store.records(slug, name, config=first.config, code_version=first.code_version,
                                            mode=first.setting) if r.seed in seeds]
        for claim in claims_of(exp):
            results.append(judge(exp.paper, claim, records, first.setting))
    return results


def null_claims_for_tasks(store: Store, tasks: Iterable, papers: dict[str, Paper],
                          pick=lambda claim: claim.resolved_null) -> list[ClaimResult]:
    """Verdicts of each claim on the runs of its own null (``pick``: or its oracle) among the (experiment,
    configuration) groups just run."""
    groups: dict[tuple[str, str, str], list] = {}
    for task in tasks:
        groups.setdefault((task.paper, task.experiment, config_hash(task.config)), []).append(task)
    results = []
    for (slug, name, _), group in groups.items():
        first = group[0]
        exp = papers[slug].experiments[name]
        seeds = {t.seed for t in group}
        records = [r for r in store.records(slug, name, config=first.config, code_version=first.code_version,
                                            mode=first.setting) if r.seed in seeds]
        for claim in claims_of(exp):
            null = pick(claim)
            if isinstance(null, _Slot) and all(first.config.get(k) == v for k, v in null.overrides.items()):
                results.append(judge(exp.paper, claim, records, first.setting))
    return results


def family_claims_for_tasks(store: Store, tasks: Iterable, papers: dict[str, Paper]) -> list[ClaimResult]:
    """Each claim of the experiments just run, read over its instance family at the setting they ran at."""
    results = []
    seen = set()
    for task in tasks:
        if (task.paper, task.experiment, task.setting) in seen:
            continue
        seen.add((task.paper, task.experiment, task.setting))
        exp = papers[task.paper].experiments[task.experiment]
        for claim in claims_of(exp):
            family = judge_family(exp.paper, claim, store, task.setting)
            if family is not None:  # the experiment's own instance ({}) first, else the first member
                members = family.family.at(task.setting)
                own = family.members[next((m for m, o in members.items() if not o), next(iter(members)))]
                results.append(read_family(ClaimResult(exp.paper, claim, own.verdict, task.setting, own.num_seeds,
                                                       own.seconds, own.records), family))
    return results
