"""Paper records, experiments and claims, and the discovery of every ``icml24.papers.*`` module.

A paper module declares ``PAPER = Paper(...)``, decorates plain functions with
``@experiment(PAPER, quick={...}, full={...})`` and lists ``CLAIMS = [Claim(...), ...]``.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import math
import pkgutil
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from icml24._extras import import_failure
from icml24._signals import sigint_deferred
from icml24.core.controls import Family, NoOracle, Null, Oracle, SingleInstance, _Slot


@dataclass
class Paper:
    """The record of one reproduced paper."""

    slug: str
    title: str
    authors: str = ""
    venue: str = "ICML 2024"
    code: str = ""
    deviations: list[str] = field(default_factory=list)
    summary: str = ""
    experiments: dict[str, Experiment] = field(default_factory=dict, repr=False)
    claims: list[Claim] = field(default_factory=list, repr=False)
    regimes: list[Regime] = field(default_factory=list, repr=False)
    module: str = field(default="", repr=False)  # the paper module that declared it (set at registration)


SETTINGS = ("quick", "full", "smoke")


@dataclass
class Experiment:
    """A plain function ``fn(ctx, **params) -> dict[str, float]`` that computes ONE seed, with its settings.

    Each setting (``quick``, ``full``, ``smoke``) is a dict of keyword arguments plus, optionally, ``"seeds": n``:
    how many seeds (0..n-1) the runner plans for it. Repetition is the runner's job: the function never loops
    over its own repeats. ``summarize(per_seed)`` (optional) turns the per-seed metric dicts of one configuration
    into metrics that only exist across seeds (a slope over a sweep, a success fraction, a median).
    ``threads`` is the torch/BLAS thread limit the runner sets around each run (0: leave as is).
    """

    paper: Paper
    fn: Callable[..., dict[str, float]]
    quick: dict[str, Any]
    full: dict[str, Any]
    smoke: dict[str, Any] | None = None
    seeds: dict[str, int] = field(default_factory=dict)
    threads: int = 0
    summarize: Callable[[list[dict[str, float]]], dict[str, float]] | None = None
    null: Null | None = None  # the default null of the claims resting on this experiment
    oracle: Oracle | NoOracle | None = None  # the default oracle of the claims resting on it
    family: Family | SingleInstance | None = None  # the default instance family of the claims resting on it
    data: Callable[[dict[str, Any]], list[str]] | None = None  # the data a configuration needs that is missing

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def key(self) -> str:
        return f"{self.paper.slug}:{self.name}"

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.fn) or ""

    def parameters(self) -> dict[str, Any]:
        """Keyword parameters (after ``ctx``) and their annotated types."""
        hints = typing.get_type_hints(self.fn)
        params = list(inspect.signature(self.fn).parameters.values())[1:]
        return {p.name: hints.get(p.name, str) for p in params}

    def defaults(self) -> dict[str, Any]:
        params = list(inspect.signature(self.fn).parameters.values())[1:]
        return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}

    def setting(self, full: bool = False, setting: str | None = None) -> str:
        """The setting's name from ``full``/``setting``, checked."""
        name = setting or ("full" if full else "quick")
        if name not in SETTINGS:
            raise ValueError(f"unknown setting {name!r}; choose one of {', '.join(SETTINGS)}")
        return name

    def config(self, full: bool = False, overrides: dict[str, Any] | None = None,
               setting: str | None = None) -> dict[str, Any]:
        """The keyword arguments of one run: defaults < quick/full/smoke setting < user overrides."""
        chosen = getattr(self, self.setting(full, setting))
        if chosen is None:
            raise ValueError(f"{self.key} declares no smoke setting; add smoke={{...}} to its @experiment")
        config = {**self.defaults(), **chosen, **(overrides or {})}
        unknown = set(config) - set(self.parameters())
        if unknown:
            raise ValueError(
                f"{self.key} takes no parameter {', '.join(sorted(unknown))}; "
                f"it takes: {', '.join(self.parameters()) or 'none'}"
            )
        missing = set(self.parameters()) - set(config)
        if missing:
            raise ValueError(f"{self.key} needs a value for {', '.join(sorted(missing))} (use --set key=value)")
        return config

    def null_config(self, null: _Slot, full: bool = False, overrides: dict[str, Any] | None = None,
                    setting: str | None = None) -> dict[str, Any]:
        """The configuration of a null's (or an oracle's) run: the setting's configuration (with ``overrides``), then
        the stand-in's."""
        base = self.config(full=full, overrides=overrides, setting=setting)
        unknown = set(null.overrides) - set(self.parameters())
        if unknown:
            raise ValueError(f"{self.key}: {type(null).__name__.lower()} {null.label!r} sets "
                             f"{', '.join(sorted(unknown))}, which the experiment does not take; it takes: "
                             f"{', '.join(self.parameters()) or 'none'}")
        return {**base, **null.overrides}

    def member_config(self, family: Family, member: str, setting: str = "quick",
                      overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """The configuration of one family member's run at ``setting``: the setting's, then the member's overrides."""
        members = family.at(setting)
        if member not in members:
            raise ValueError(f"{self.key}: family {family.label!r} has no member {member!r} at {setting}; it has: "
                             f"{', '.join(members)}")
        unknown = set(members[member]) - set(self.parameters())
        if unknown:
            raise ValueError(f"{self.key}: family member {member!r} sets {', '.join(sorted(unknown))}, which the "
                             f"experiment does not take; it takes: {', '.join(self.parameters()) or 'none'}")
        return self.config(setting=setting, overrides={**(overrides or {}), **members[member]})

    def nulls(self) -> list[Null]:
        """The distinct nulls of the claims resting on this experiment (one run each per seed)."""
        return self._distinct(lambda claim: claim.resolved_null)

    def oracles(self) -> list[Oracle]:
        """The distinct oracles of the claims resting on this experiment (one run each per seed)."""
        return self._distinct(lambda claim: claim.resolved_oracle)

    def families(self) -> list[Family]:
        """The distinct instance families of the claims resting on this experiment."""
        found: dict[int, Family] = {}
        for claim in self.paper.claims:
            if claim.experiment is self and isinstance(claim.resolved_family, Family):
                found.setdefault(id(claim.resolved_family), claim.resolved_family)
        return list(found.values())

    def family_grid(self, setting: str = "quick", cheap_only: bool = False) -> list[dict[str, Any]]:
        """The overrides of every member of every family of this experiment at ``setting`` (distinct, in order)."""
        grid: dict[str, dict[str, Any]] = {}
        for family in self.families():
            if family.cheap or not cheap_only:
                for overrides in family.at(setting).values():
                    grid.setdefault(repr(sorted(overrides.items())), dict(overrides))
        return list(grid.values())

    def _distinct(self, pick) -> list:
        found: dict[str, _Slot] = {}
        for claim in self.paper.claims:
            slot = pick(claim) if claim.experiment is self else None
            if isinstance(slot, _Slot):
                found.setdefault(slot.key, slot)
        return list(found.values())

    def missing_data(self, config: dict[str, Any]) -> list[str]:
        """What a run of ``config`` needs on disk and does not find, one line each saying where and how to get it
        (from the ``data=`` declaration; empty when the experiment needs no files or all are there)."""
        return list(self.data(config)) if self.data is not None else []

    def default_seeds(self, full: bool = False, setting: str | None = None) -> list[int]:
        """The seeds the runner plans for a setting when the user gives none: 0..n-1."""
        return list(range(self.seeds[self.setting(full, setting)]))

    def summarizer(self, fn: Callable[[list[dict[str, float]]], dict[str, float]]):
        """Decorator: register ``fn(per_seed_metrics) -> dict`` as this experiment's across-seed summary."""
        self.summarize = fn
        return fn

    def __call__(self, ctx, **params) -> dict[str, float]:
        return self.fn(ctx, **params)


def _split_seeds(where: str, setting: dict[str, Any] | None, default: int) -> tuple[dict[str, Any], int]:
    config = dict(setting or {})
    seeds = config.pop("seeds", default)
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise ValueError(f"{where}: 'seeds' must be a positive int (how many seeds the runner plans), got {seeds!r}")
    return config, seeds


def experiment(paper: Paper, quick: dict[str, Any] | None = None, full: dict[str, Any] | None = None,
               smoke: dict[str, Any] | None = None, threads: int = 0,
               summarize: Callable[[list[dict[str, float]]], dict[str, float]] | None = None,
               null: Null | None = None, data: Callable[[dict[str, Any]], list[str]] | None = None,
               oracle: Oracle | NoOracle | None = None, family: Family | SingleInstance | None = None):
    """Register ``fn`` as an experiment of ``paper``; ``fn(ctx, **params)`` computes one seed.

    ``quick`` must finish in about 3 minutes on 2 CPU cores; ``full`` is the paper-scale setting; ``smoke`` is
    a seconds-long setting the test suite runs for every experiment. Each may hold ``"seeds": n`` (quick: 1 by
    default; full: the quick number; smoke: 1). ``threads`` caps torch/BLAS threads per run (0: unchanged).
    ``null`` is the ``Null`` its claims are run against unless a claim names its own; ``oracle`` (an ``Oracle``, or
    ``NoOracle(reason)``) and ``family`` (a ``Family``, or ``SingleInstance(reason)``) likewise.
    ``data(config) -> list[str]`` declares the files a configuration reads: it returns one line per missing one
    (where it was looked for and how to get it), so the command refuses a run before any work instead of storing
    an error row per seed; it only checks, never downloads.
    The decorated object stays callable as ``fn(ctx, **params)``.
    """

    def register(fn: Callable[..., dict[str, float]]) -> Experiment:
        where = f"{paper.slug}:{fn.__name__}"
        if "seeds" in inspect.signature(fn).parameters:
            raise ValueError(f"{where} takes a 'seeds' parameter; repetition is the runner's job: compute one seed "
                             "from ctx and declare how many in the setting, e.g. quick={'seeds': 3}")
        quick_config, quick_seeds = _split_seeds(f"{where} quick", quick, 1)
        full_config, full_seeds = _split_seeds(f"{where} full", full if full is not None else quick, quick_seeds)
        smoke_config, smoke_seeds = _split_seeds(f"{where} smoke", smoke, 1) if smoke is not None else (None, 1)
        exp = Experiment(paper=paper, fn=fn, quick=quick_config, full=full_config, smoke=smoke_config,
                         seeds={"quick": quick_seeds, "full": full_seeds, "smoke": smoke_seeds}, threads=int(threads),
                         summarize=summarize, null=null, data=data, oracle=oracle, family=family)
        if null is not None and not isinstance(null, Null):
            raise TypeError(f"{where}: null must be a Null(label, overrides), got {type(null).__name__}")
        if null is not None:
            exp.null_config(null, setting="quick")  # the null names real parameters
        _check_controls(where, exp, oracle, family)
        if exp.name in paper.experiments:
            raise ValueError(f"{paper.slug} already has an experiment named {exp.name!r}")
        paper.experiments[exp.name] = exp
        return exp

    return register


def _check_controls(where: str, exp: Experiment, oracle, family) -> None:
    """An oracle and a family, when given, are of the right type and name real parameters of ``exp``."""
    if oracle is not None and not isinstance(oracle, (Oracle, NoOracle)):
        raise TypeError(f"{where}: oracle must be an Oracle(label, overrides) or NoOracle(reason), got "
                        f"{type(oracle).__name__}")
    if isinstance(oracle, Oracle):
        exp.null_config(oracle, setting="quick")
    if family is not None and not isinstance(family, (Family, SingleInstance)):
        raise TypeError(f"{where}: family must be a Family(label, members, share) or SingleInstance(reason), got "
                        f"{type(family).__name__}")
    if isinstance(family, Family):
        for setting in ("quick", "full"):
            for member in family.at(setting):
                exp.member_config(family, member, setting)


class _RecordingMetrics(dict):
    """A metrics dict that remembers which keys a claim's check read (shown as 'measured')."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read: list[str] = []

    def __getitem__(self, key):
        if key not in self.read:
            self.read.append(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        if key in self:
            return self[key]
        return default


class OutOfRegime(Exception):
    """Raised by a claim's ``check`` when the measurement lies outside the regime the claim speaks about (a model at
    or below chance on every task it was given, say): the verdict is ``not run`` with the reason, neither ``holds``
    nor ``fails``."""


@dataclass
class Verdict:
    """The computed outcome of one claim: ``holds``, ``fails``, ``error`` (with the message) or ``not run``."""

    status: str
    measured: dict[str, float]
    message: str = ""


@dataclass
class Claim:
    """A paper's claim, checked on the metrics (mean over seeds) of one experiment.

    ``check`` receives a dict of metric means over seeds, with ``<key>_std`` beside each key
    and ``num_seeds``; it returns a bool. ``paper`` states what the paper reports. ``setting="full"`` marks a
    claim only the paper-scale setting can test (the quick one is too short to reach the regime): on quick runs
    its verdict is ``not run``, with the command that runs it. ``null`` is what the claim says the method beats,
    in the method's slot (default: the experiment's null); the same experiment run with it must give ``fails``.
    ``oracle`` is what a perfect method gives in that slot (``Oracle``; ``NoOracle(reason)`` where none exists): the
    experiment run with it must give ``holds``. ``family`` is the family of instances the claim speaks of
    (``Family``; ``SingleInstance(reason)`` where one instance is the paper's claim): the verdict reads the family
    when its members are stored. Both default to the experiment's.
    """

    text: str
    experiment: Experiment
    check: Callable[[dict[str, float]], bool]
    paper: str = ""
    setting: str = ""
    null: Null | None = None
    oracle: Oracle | NoOracle | None = None
    family: Family | SingleInstance | None = None

    def __post_init__(self):
        if not isinstance(self.experiment, Experiment):
            raise TypeError(f"Claim {self.text!r}: experiment must be a function decorated with @experiment")
        if self.setting not in ("", "full"):
            raise ValueError(f"Claim {self.text!r}: setting must be '' (any) or 'full', got {self.setting!r}")
        if self.null is not None:
            if not isinstance(self.null, Null):
                raise TypeError(f"Claim {self.text!r}: null must be a Null(label, overrides)")
            self.experiment.null_config(self.null, setting="quick")  # the null names real parameters
        _check_controls(f"Claim {self.text!r}", self.experiment, self.oracle, self.family)
        self.experiment.paper.claims.append(self)

    @property
    def resolved_null(self) -> Null | None:
        """The claim's own null, else its experiment's."""
        return self.null if self.null is not None else self.experiment.null

    @property
    def resolved_oracle(self) -> Oracle | NoOracle | None:
        """The claim's own oracle (or stated absence of one), else its experiment's."""
        return self.oracle if self.oracle is not None else self.experiment.oracle

    @property
    def resolved_family(self) -> Family | SingleInstance | None:
        """The claim's own instance family (or stated single instance), else its experiment's."""
        return self.family if self.family is not None else self.experiment.family

    def evaluate(self, metrics: dict[str, float] | None) -> Verdict:
        """Compute the verdict. Missing, NaN or infinite metrics give ``error``, never a verdict."""
        if not metrics:
            return Verdict("error", {}, "no successful run of the experiment is stored")
        bad = sorted(k for k, v in metrics.items() if not isinstance(v, (int, float)) or not math.isfinite(v))
        recording = _RecordingMetrics(metrics)
        try:
            result = self.check(recording)
        except KeyError as exc:  # what it read before the missing key stays visible
            read = {k: metrics[k] for k in recording.read if k in metrics}
            return Verdict("error", read, f"the experiment returned no metric {exc}")
        except OutOfRegime as exc:  # the check refuses to judge: say why, with what it read
            return Verdict("not run", {k: metrics[k] for k in recording.read}, f"out of regime: {exc}")
        except Exception as exc:  # a broken check is reported, not raised
            return Verdict("error", {}, f"{type(exc).__name__}: {exc}")
        measured = {k: metrics[k] for k in recording.read}
        bad_read = [k for k in recording.read if k in bad]
        if bad_read:
            return Verdict("error", measured, f"non-finite metric(s): {', '.join(bad_read)}")
        if not isinstance(result, (bool,)) and not hasattr(result, "__bool__"):
            return Verdict("error", measured, f"check returned {result!r}, not a bool")
        return Verdict("holds" if bool(result) else "fails", measured)


@dataclass
class Regime:
    """A measurement shown beside the verdicts, never a verdict: the quantity that says whether a stand-in sits in
    the regime a claim depends on, or a property no null can fail (an identity, arithmetic fixed by a schedule).

    ``metrics`` are keys of the experiment's metrics (means over seeds, with their spread); ``paper`` is the
    paper's value or regime, for comparison.
    """

    text: str
    experiment: Experiment
    metrics: list[str]
    paper: str = ""

    def __post_init__(self):
        if not isinstance(self.experiment, Experiment):
            raise TypeError(f"Regime {self.text!r}: experiment must be a function decorated with @experiment")
        if isinstance(self.metrics, str) or not self.metrics:
            raise ValueError(f"Regime {self.text!r}: metrics must be a non-empty list of metric names")
        self.metrics = list(self.metrics)
        self.experiment.paper.regimes.append(self)


_PAPERS: dict[str, Paper] = {}
BROKEN: dict[str, str] = {}  # paper module -> why it failed to import


def discover(package: str = "icml24.papers") -> dict[str, Paper]:
    """Import every module of ``package`` and return its papers by slug.

    A module that fails to import is recorded in ``BROKEN`` (shown by ``icml24 list``) instead of
    taking every other paper down with it.
    """
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__, package + "."):
        if info.name in BROKEN:
            continue
        try:
            with sigint_deferred():  # an interrupt mid-import could surface as an error and mark the paper broken
                register_module(importlib.import_module(info.name))
        except Exception as exc:  # a broken paper module must not hide the others
            BROKEN[info.name] = import_failure(exc, info.name)
    return registered()


def register_module(module) -> Paper | None:
    """Register the ``PAPER`` of an imported module (tests use this for toy papers)."""
    paper = getattr(module, "PAPER", None)
    if isinstance(paper, Paper):
        paper.module = paper.module or _declaring_module(module.__name__, paper)
        known = _PAPERS.get(paper.slug)
        if known is not None and known is not paper:
            raise ValueError(f"two modules declare the paper slug {paper.slug!r}")
        _PAPERS[paper.slug] = paper
    return paper


def _declaring_module(name: str, paper: Paper) -> str:
    """The outermost package above module ``name`` that holds the same ``PAPER`` (a paper package's modules, say
    ``papers/rpg/experiments.py``, import the package's PAPER: the paper's module is the package, whichever of its
    modules was registered first)."""
    while "." in name:
        parent = sys.modules.get(name.rpartition(".")[0])
        if parent is None or getattr(parent, "PAPER", None) is not paper:
            break
        name = parent.__name__
    return name


def registered() -> dict[str, Paper]:
    """Every paper registered so far (by discovery or ``register_module``), by slug."""
    return dict(sorted(_PAPERS.items()))


def paper_modules(package: str = "icml24.papers") -> dict[str, str]:
    """Slug -> module name of every paper (a package ``papers/<slug>/`` or a flat module), from file names alone
    (nothing is imported beyond the package).

    A paper's slug is its module name with ``-`` for ``_`` (``agent_smith/`` declares ``agent-smith``; tested).
    """
    pkg = importlib.import_module(package)
    return {info.name.rpartition(".")[2].replace("_", "-"): info.name
            for info in pkgutil.iter_modules(pkg.__path__, package + ".")}


def get_paper(slug: str) -> Paper:
    """The paper ``slug``, importing only its own module: a mistyped name is answered from file names at once."""
    if slug in _PAPERS:
        return _PAPERS[slug]
    modules = paper_modules()
    if slug not in modules:
        known = sorted(set(modules) | set(_PAPERS))
        close = difflib.get_close_matches(slug, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(f"no paper {slug!r}; {hint}known papers: {', '.join(known) or 'none'} (see `icml24 list`)")
    if modules[slug] in BROKEN:
        raise ValueError(f"paper {slug!r} failed to import: {BROKEN[modules[slug]]}")
    try:
        with sigint_deferred():
            paper = register_module(importlib.import_module(modules[slug]))
    except Exception as exc:
        BROKEN[modules[slug]] = import_failure(exc, modules[slug])
        raise ValueError(f"paper {slug!r} failed to import: {BROKEN[modules[slug]]}") from exc
    if paper is None or paper.slug != slug:
        raise ValueError(f"module {modules[slug]} does not declare the paper {slug!r} (its PAPER.slug must match)")
    return paper


def resolve(target: str) -> list[Experiment]:
    """``SLUG`` -> all its experiments; ``SLUG:EXPERIMENT`` -> that one."""
    slug, colon, name = target.strip().partition(":")
    if not slug:
        raise ValueError(f"{target!r} names no paper; write SLUG or SLUG:EXPERIMENT (see `icml24 list`)")
    paper = get_paper(slug)
    if colon and not name:
        raise ValueError(f"{target!r} names no experiment after ':'; {slug} has: {', '.join(paper.experiments)} "
                         f"(or write {slug!r} alone for all of them)")
    if not name:
        return list(paper.experiments.values())
    if name not in paper.experiments:
        close = difflib.get_close_matches(name, list(paper.experiments), n=1)
        hint = f"did you mean {slug}:{close[0]}? " if close else ""
        raise ValueError(
            f"paper {slug!r} has no experiment {name!r}; {hint}it has: {', '.join(paper.experiments) or 'none'}"
        )
    return [paper.experiments[name]]
