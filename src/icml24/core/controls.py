"""What a claim is run against besides the method: its null (what it says the method beats, must fail), its oracle
(what a perfect method gives, must hold) and its instance family (the instances the claim speaks of)."""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass
from typing import Any


@dataclass
class _Slot:
    """A stand-in for the method, put in its slot by ``overrides`` of the experiment's parameters."""

    label: str
    overrides: dict[str, Any]
    cheap: bool = False
    _ROLE: typing.ClassVar[str] = "slot"
    _EXAMPLE: typing.ClassVar[str] = "{'method': 'untrained'}"

    def __post_init__(self):
        kind = type(self).__name__
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError(f"{kind} needs a label saying what replaces the method, e.g. {self._ROLE!r}")
        if not isinstance(self.overrides, dict) or not self.overrides:
            raise ValueError(f"{kind} {self.label!r}: overrides must be a non-empty dict of experiment parameters "
                             f"that put it in the method's slot, e.g. {self._EXAMPLE}")

    @property
    def key(self) -> str:
        """A stable name of the overrides (claims whose stand-ins share it share the runs)."""
        return ",".join(f"{k}={self.overrides[k]!r}" for k in sorted(self.overrides))


@dataclass
class Null(_Slot):
    """What a claim says the method beats (or nothing: an untrained model, random search, the baseline), put in
    the method's slot: ``overrides`` of the experiment's parameters that make the same experiment run it.

    A claim is worth its verdict only if its experiment, run with its null, gives ``fails``
    (``tests/papers/test_nulls.py`` checks every claim at smoke). ``cheap`` says the null run costs less than a
    fifth of the experiment's quick run (measured once and stated): ``icml24 reproduce`` then runs it too, and
    the report shows its verdict beside the claim's.
    """

    _ROLE: typing.ClassVar[str] = "an untrained generator"


@dataclass
class Oracle(_Slot):
    """What a perfect method would give, in the method's slot (the positive control): the held-out data as the
    generator's samples, exact posterior draws, the true graph, the optimal policy, the fine-tuned model itself.

    The claim run with its oracle must give ``holds`` (``tests/papers/test_oracles.py`` checks every claim at
    smoke): a claim no oracle can reach is a miscalibrated bar, fixed in the bar or the metric, never the method.
    ``cheap`` as for ``Null``.
    """

    _ROLE: typing.ClassVar[str] = "the held-out levels as samples"
    _EXAMPLE: typing.ClassVar[str] = "{'generator': 'held_out'}"


@dataclass
class NoOracle:
    """A claim with no possible oracle, and why, in one line (e.g. a speed claim: no method is 'perfect')."""

    reason: str

    def __post_init__(self):
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("NoOracle needs a one-line reason why no perfect method exists for the claim")


@dataclass
class Family:
    """The instances a claim speaks of: a named family of problem instances (random draws of the paper's generative
    model, the paper's other datasets, a sweep over the quantity the claim depends on).

    ``members`` maps a member's name to the ``overrides`` of the experiment's parameters that build it (``{}`` is the
    experiment's own instance, which stays a member). ``full`` holds the members at the paper-scale setting (default:
    the quick ones). Draws use seeds disjoint from those used to choose any setting. The claim holds when its check
    holds on at least ``share`` of the members (stated in the claim's text, fixed before measuring); the report shows
    "holds on k of n instances" and the members where it fails. ``cheap``: ``icml24 reproduce`` runs the members too.
    """

    label: str
    members: dict[str, dict[str, Any]]
    share: float
    full: dict[str, dict[str, Any]] | None = None
    cheap: bool = False

    def __post_init__(self):
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError("Family needs a label saying what varies over its instances, e.g. 'homophily 0.1-0.9'")
        for name, members in (("members", self.members), ("full", self.full)):
            if members is None and name == "full":
                continue
            if not isinstance(members, dict) or len(members) < 2:
                raise ValueError(f"Family {self.label!r}: {name} must map at least two member names to overrides "
                                 "({} is the experiment's own instance)")
            for member, overrides in members.items():
                if not isinstance(member, str) or not member or not isinstance(overrides, dict):
                    raise ValueError(f"Family {self.label!r}: member {member!r} must be a name -> dict of overrides")
        if isinstance(self.share, bool) or not isinstance(self.share, (int, float)) or not 0 < self.share <= 1:
            raise ValueError(f"Family {self.label!r}: share must be in (0, 1] (the fraction of members on which the "
                             f"claim must hold), got {self.share!r}")

    def at(self, setting: str) -> dict[str, dict[str, Any]]:
        """The members at ``setting`` ("quick", "smoke": the quick ones; "full": ``full`` or the quick ones)."""
        return dict(self.full if setting == "full" and self.full is not None else self.members)

    def required(self, n: int) -> int:
        """How many of ``n`` members must hold (ceil of share * n; a share of 1 means every one)."""
        return max(1, math.ceil(self.share * n - 1e-9))


@dataclass
class SingleInstance:
    """A claim about one instance by nature (one named dataset, a fixed schedule), and why, in one line."""

    reason: str

    def __post_init__(self):
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise ValueError("SingleInstance needs a one-line reason why one instance is the paper's claim")
