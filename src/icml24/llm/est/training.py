"""Training with evolving subnetworks (EST, Li et al., ICML 2024, Alg. of Sec. 3): a fresh subnetwork per step,
one AdamW optimizer throughout (our choice), analytic FLOPs per step, held-out evaluation, checkpoint/resume.

With ``schedule=EvolvingSubnetworkSchedule.full()`` the same loop is the full-model baseline: the same seed gives
the same initial weights, data order and learning-rate schedule, so only the subnetworks differ.
"""

from __future__ import annotations

import dataclasses
import math
import os
import pickle
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from icml24._estimator import Estimator
from icml24._progress import check_progress, tracked
from icml24._random import seed_int
from icml24._validation import FittedAttributes, check_finite, check_positive, check_positive_int

from .flops import subnetwork_flops
from .model import GPT, GPTConfig
from .schedule import EvolvingSubnetworkSchedule, SubnetworkSampler


def _as_tokens(name: str, tokens, vocab_size: int, length: int) -> torch.Tensor:
    if tokens is None:
        raise ValueError(f"{name} is required: a 1-d array of token ids")
    check_finite(name, tokens)
    out = torch.as_tensor(np.asarray(tokens)).long().reshape(-1)
    if out.numel() < length + 2:
        raise ValueError(f"{name} has {out.numel()} tokens; need more than block_size + 1 = {length + 1}")
    if int(out.min()) < 0 or int(out.max()) >= vocab_size:
        raise ValueError(f"{name} holds ids outside [0, {vocab_size}); encode the text with vocab_size ids")
    return out


@dataclass
class _Run:
    """The live objects of one training run (what a checkpoint saves, plus the token arrays)."""

    model: GPT
    optimizer: torch.optim.Optimizer
    sampler: SubnetworkSampler
    data_gen: torch.Generator
    train: torch.Tensor
    val: torch.Tensor
    state: dict
    end: int


class EvolvingSubnetworkTrainer(FittedAttributes, Estimator):
    """Train a ``GPT`` for ``steps`` steps of ``batch_size`` x ``block_size`` tokens under ``schedule``.

    Args:
        config: the model architecture.
        schedule: the evolving schedule (default: ``EvolvingSubnetworkSchedule.default()``); ``.full()`` = baseline.
        steps: the run's length in optimizer steps (same tokens for any schedule).
        batch_size: sequences per step.
        lr: the peak learning rate.
        min_lr_ratio: the cosine decay ends at ``min_lr_ratio`` x lr.
        warmup: linear warm-up over ``warmup`` x steps, then cosine decay.
        weight_decay: AdamW decay, on matrices only.
        grad_clip: gradient-norm clipping (0 disables).
        eval_every: held-out loss of the full model every ``eval_every`` steps (and at the end).
        eval_batches: the held-out loss reads ``eval_batches`` fixed batches of evenly spaced windows.
        checkpoint_path: where to save; ``fit`` resumes from an existing file.
        checkpoint_every: save every ``checkpoint_every`` steps too (0: only at the end of the run).
        random_state (None | int | Generator): derives the initial weights, the data order and the
            subnetwork draws (three independent streams).

    Learned state: ``model_``, ``train_loss_`` (per step), ``step_flops_`` (analytic, per step), ``step_seconds_``
    and ``step_cpu_seconds_`` (wall clock and this thread's CPU time per step, evaluation excluded), ``evals_``
    (dicts with step, tokens, flops, seconds, val_loss), ``total_flops_``, ``final_val_loss_``. Several runs can
    share the machine's load alike with ``fit_lockstep``.
    """

    def __init__(self, config: GPTConfig, schedule: EvolvingSubnetworkSchedule | None = None, steps: int = 1000,
                 batch_size: int = 16, lr: float = 3e-3, min_lr_ratio: float = 0.1, warmup: float = 0.05,
                 weight_decay: float = 0.1, grad_clip: float = 1.0, eval_every: int = 100, eval_batches: int = 8,
                 checkpoint_path: str | Path | None = None, checkpoint_every: int = 0, random_state=None):
        self.config, self.schedule, self.steps, self.batch_size = config, schedule, steps, batch_size
        self.lr, self.min_lr_ratio, self.warmup = lr, min_lr_ratio, warmup
        self.weight_decay, self.grad_clip = weight_decay, grad_clip
        self.eval_every, self.eval_batches = eval_every, eval_batches
        self.checkpoint_path, self.checkpoint_every, self.random_state = checkpoint_path, checkpoint_every, random_state

    def _check_params(self) -> None:
        """Check the hyperparameters and derive ``schedule_`` and ``checkpoint_path_`` (at fit)."""
        for name in ("steps", "batch_size", "eval_every", "eval_batches"):
            check_positive_int(name, getattr(self, name))
        check_positive("lr", self.lr)
        for name in ("min_lr_ratio", "warmup", "weight_decay", "grad_clip", "checkpoint_every"):
            check_positive(name, getattr(self, name), allow_zero=True)
        self.schedule_ = self.schedule if self.schedule is not None else EvolvingSubnetworkSchedule.default()
        self.checkpoint_path_ = Path(self.checkpoint_path) if self.checkpoint_path is not None else None

    def learning_rate(self, step: int) -> float:
        """Warm-up then cosine decay; the same for every schedule (the paper's comparison keeps it fixed)."""
        warm = max(1, round(self.warmup * self.steps))
        if step < warm:
            return self.lr * (step + 1) / warm
        progress = (step - warm) / max(1, self.steps - warm)
        floor = self.min_lr_ratio * self.lr
        return floor + 0.5 * (self.lr - floor) * (1 + math.cos(math.pi * min(1.0, progress)))

    def _streams(self) -> tuple[torch.Generator, torch.Generator, torch.Generator]:
        seeds = np.random.SeedSequence(seed_int(self.random_state)).generate_state(3)  # int: itself
        return tuple(torch.Generator().manual_seed(int(s)) for s in seeds)

    def _optimizer(self, model: GPT) -> torch.optim.AdamW:
        decay = [p for p in model.parameters() if p.ndim >= 2]
        rest = [p for p in model.parameters() if p.ndim < 2]
        return torch.optim.AdamW([{"params": decay, "weight_decay": self.weight_decay},
                                  {"params": rest, "weight_decay": 0.0}], lr=self.lr, betas=(0.9, 0.95))

    def _batch(self, tokens: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        length = self.config.block_size
        starts = torch.randint(0, tokens.numel() - length - 1, (self.batch_size,), generator=generator)
        window = starts[:, None] + torch.arange(length + 1)
        chunk = tokens[window]
        return chunk[:, :-1], chunk[:, 1:]

    @torch.no_grad()
    def evaluate(self, tokens, model: GPT | None = None) -> float:
        """Mean held-out loss (nats/token) of the full model on fixed, evenly spaced windows of ``tokens``."""
        model = model if model is not None else self.model_
        length = self.config.block_size
        tokens = _as_tokens("tokens", tokens, self.config.vocab_size, length)
        count = self.eval_batches * self.batch_size
        starts = torch.linspace(0, tokens.numel() - length - 1, count).long()
        was_training = model.training
        model.eval()
        total = 0.0
        for chunk in starts.split(self.batch_size):
            window = tokens[chunk[:, None] + torch.arange(length + 1)]
            total += model(window[:, :-1], window[:, 1:])[1].item() * chunk.numel()
        model.train(was_training)
        return total / count

    def fit(self, train_tokens, val_tokens, progress: Callable[[int, int], None] | None = None,
            stop_after: int | None = None) -> EvolvingSubnetworkTrainer:
        """Train (resuming from ``checkpoint_path`` if it exists); ``stop_after`` ends this call after that step
        count (an interruption), leaving a checkpoint to resume from. ``progress(done, total)`` is called after
        each training step of this call (``icml24._progress``; e.g. ``ctx.progress_callback("EST")``)."""
        run = self._start(train_tokens, val_tokens, stop_after)
        for _ in tracked(self._steps(run), check_progress(progress), total=run.end - run.state["step"]):
            pass
        return self

    def _start(self, train_tokens, val_tokens, stop_after: int | None) -> _Run:
        """Build (or restore from the checkpoint) everything one run needs."""
        self._check_params()
        cfg = self.config
        train = _as_tokens("train_tokens", train_tokens, cfg.vocab_size, cfg.block_size)
        val = _as_tokens("val_tokens", val_tokens, cfg.vocab_size, cfg.block_size)
        model_gen, data_gen, sampler_gen = self._streams()
        model = GPT(cfg, random_state=model_gen)
        optimizer = self._optimizer(model)
        sampler = SubnetworkSampler(cfg, self.schedule_, sampler_gen)
        state = {"step": 0, "train_loss": [], "step_flops": [], "step_seconds": [], "step_cpu_seconds": [],
                 "evals": []}
        if self.checkpoint_path_ is not None and self.checkpoint_path_.exists():
            try:
                saved = torch.load(self.checkpoint_path_, weights_only=True)  # tensors and plain data: no code runs
            except pickle.UnpicklingError as exc:
                raise ValueError(f"{self.checkpoint_path_} holds objects other than tensors and plain data (refused, "
                                 f"nothing in it was run: {str(exc).splitlines()[0][:120]})") from None
            if saved.get("config") != dataclasses.asdict(cfg):
                raise ValueError(f"{self.checkpoint_path_} was written for another model configuration; delete it "
                                 "or pass another checkpoint_path")
            model.load_state_dict(saved["model"])
            optimizer.load_state_dict(saved["optimizer"])
            data_gen.set_state(saved["data_generator"])
            sampler.load_state_dict(saved["sampler"])
            state = {"step_cpu_seconds": [0.0] * saved["state"]["step"], **saved["state"]}
        end = self.steps if stop_after is None else min(self.steps, int(stop_after))
        return _Run(model, optimizer, sampler, data_gen, train, val, state, end)

    def _steps(self, run: _Run) -> Iterator[int]:
        """The training loop, one step per ``next``: yields the step count; the fitted state is set at the end."""
        cfg, model, optimizer, state = self.config, run.model, run.optimizer, run.state
        model.train()
        for step in range(state["step"], run.end):
            started, cpu_started = time.perf_counter(), time.thread_time()
            for group in optimizer.param_groups:
                group["lr"] = self.learning_rate(step)
            x, y = self._batch(run.train, run.data_gen)
            subnetwork = None if self.schedule_.is_full() else run.sampler.sample(step, self.steps)
            _, loss = model(x, y, subnetwork=subnetwork)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if self.grad_clip > 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.grad_clip)
            optimizer.step()
            state["step_seconds"].append(time.perf_counter() - started)
            state["step_cpu_seconds"].append(time.thread_time() - cpu_started)
            check_finite("training loss", loss.detach())
            state["train_loss"].append(loss.item())
            state["step_flops"].append(subnetwork_flops(cfg, subnetwork, self.batch_size, cfg.block_size))
            state["step"] = step + 1
            if state["step"] % self.eval_every == 0 or state["step"] == self.steps:
                tokens = state["step"] * self.batch_size * cfg.block_size
                state["evals"].append({"step": state["step"], "tokens": tokens,
                                       "flops": float(sum(state["step_flops"])),
                                       "seconds": float(sum(state["step_seconds"])),
                                       "val_loss": self.evaluate(run.val, model)})
            if self.checkpoint_path_ is not None and (state["step"] == run.end or (
                    self.checkpoint_every and state["step"] % self.checkpoint_every == 0)):
                self._save(model, optimizer, run.data_gen, run.sampler, state)
            yield state["step"]
        self.model_ = model
        self.train_loss_ = np.array(state["train_loss"])
        self.step_flops_ = np.array(state["step_flops"], dtype=float)
        self.step_seconds_ = np.array(state["step_seconds"])
        self.step_cpu_seconds_ = np.array(state["step_cpu_seconds"])
        self.evals_ = list(state["evals"])
        self.steps_done_ = state["step"]
        self.total_flops_ = float(self.step_flops_.sum())
        self.final_val_loss_ = self.evals_[-1]["val_loss"] if self.evals_ else math.nan

    def _save(self, model, optimizer, data_gen, sampler, state) -> None:
        self.checkpoint_path_.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.checkpoint_path_.with_name(f"{self.checkpoint_path_.name}.{os.getpid()}.tmp")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "data_generator": data_gen.get_state(), "sampler": sampler.state_dict(), "state": state,
                    "config": dataclasses.asdict(self.config)}, tmp)  # plain data: loadable with weights_only
        os.replace(tmp, self.checkpoint_path_)

    def flops_saving(self) -> float:
        """1 - sum_t FLOPs(subnetwork_t) / (steps x FLOPs(full model)) over the steps run."""
        full = subnetwork_flops(self.config, None, self.batch_size, self.config.block_size)
        return 1.0 - self.total_flops_ / (full * len(self.step_flops_))


def fit_lockstep(trainers: list[EvolvingSubnetworkTrainer], train_tokens, val_tokens,
                 progress: Callable[[int, int], None] | None = None) -> list[EvolvingSubnetworkTrainer]:
    """Train several runs in one process, one step of each in turn (the order rotates every round), so a shared
    machine's load falls on all of them alike and their ``step_seconds_`` compare fairly. Each run keeps its own
    model, optimizer and seed streams, so it ends exactly where its own ``fit`` would. ``progress(done, total)``
    is called after each round (``icml24._progress``)."""
    if not trainers:
        raise ValueError("give at least one EvolvingSubnetworkTrainer")
    runs = [trainer._start(train_tokens, val_tokens, None) for trainer in trainers]
    loops = [trainer._steps(run) for trainer, run in zip(trainers, runs)]
    rounds = range(max(run.end - run.state["step"] for run in runs))
    for turn in tracked(rounds, check_progress(progress)):
        shift = turn % len(loops)
        for loop in loops[shift:] + loops[:shift]:
            next(loop, None)
    for loop in loops:  # past the last yield: each loop stores its fitted state
        for _ in loop:
            pass
    return trainers
