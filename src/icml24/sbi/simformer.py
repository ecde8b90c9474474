"""Simformer: all-in-one simulation-based inference (Gloeckler, Deistler, Weilbach, Wood & Macke, ICML 2024).

A score-based diffusion model over the joint vector ``x_hat = [theta, x]`` whose score network is a transformer with
one token per scalar variable; a condition mask ``M_C`` says which variables are observed and an attention mask
``M_E`` (from the simulator's dependency graph) says which tokens may attend to which. One network is trained on all
conditionals at once and then samples the posterior, the likelihood, or any other conditional.

Algorithm (training, paper Sec. 3 / Eq. 4)::

    repeat:
        x_0 ~ data (batch), t ~ U(t_min, 1), M_C ~ structured masks (joint|posterior|likelihood|Bern(.3)|Bern(.7))
        x_t = a(t) x_0 + sigma(t) eps;   x_t <- where(M_C, x_0, x_t)            # observed entries stay clean
        L = mean_batch lambda(t) sum_{i: M_C,i = 0} (s_phi(x_t, t, M_C, M_E)_i + eps_i / sigma(t))^2
    sample: x_T ~ N(a(T) mu, a(T)^2 var + sigma(T)^2), observed entries clamped, then reverse SDE (Euler–Maruyama)
            dx = -[f - g^2 s_phi] dt + g dW, with drift and diffusion multiplied by (1 - M_C).

Example::

    model = Simformer(graph=task.graph).append_simulations(theta, x).train(max_steps=5000)
    posterior = model.sample(1000, condition={model.num_theta_ + i: v for i, v in enumerate(x_o)}, random_state=1)
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch
from torch import Tensor

from icml24._estimator import Sampler
from icml24._progress import Progress, check_progress, tracked
from icml24._random import seed_int, spawn, torch_generator
from icml24._validation import FittedAttributes, NotFittedError, check_finite, check_positive, check_positive_int

from .masks import (
    GRAPH_KINDS,
    as_dag,
    attention_mask,
    batch_attention_masks,
    check_condition_masks,
    check_mask_mixture,
    sample_condition_masks,
)
from .sampling import euler_maruyama, probability_flow_ode, probability_flow_ode_adaptive, rejection_sample
from .sde import denoising_loss, make_sde
from .transformer import FixedConditionScore, ScoreTransformer

SAMPLING_METHODS = ("sde", "ode", "ode_adaptive")


class Simformer(FittedAttributes, Sampler):
    """Simformer estimator with an sbi-style interface: ``append_simulations`` -> ``train`` -> ``sample``.

    Args:
        num_variables (int | None): length of the joint vector ``[theta, x]``; checked against the data when given.
        graph (array [n, n] | None): the simulator's DAG over ``[theta, x]`` with ``graph[i, j] = True`` when ``j``
            is a parent of ``i``; ``None`` means dense attention.
        graph_kind (str): ``"undirected"`` (moralized, default when a graph is given), ``"directed"`` (minimally
            faithful inverse given the condition mask) or ``"dense"``.
        sde (str): ``"vesde"`` (default; sigma in [1e-4, 15]) or ``"vpsde"`` (beta in [0.01, 10]).
        num_layers (int): transformer blocks (default 6, the paper's "small" model).
        num_heads (int): attention heads per block (default 4).
        head_dim (int): size of each head (default 10).
        widening_factor (int): hidden width of the feed-forward layers as a multiple of the token size (default 3).
        id_dim (int): size of the variable-identity embedding in each token (default 20).
        value_dim (int): size of the value embedding in each token (default 20).
        condition_dim (int): size of the condition-state embedding in each token (default 10).
        time_dim (int): size of the diffusion-time embedding (default 128).
        condition_masks (str | array): ``"structured"`` (paper default), ``"beta_bernoulli"`` (``p ~ Beta(1, 4)``),
            ``"joint"``, ``"posterior"``, ``"likelihood"`` (official options), or a ``[k, n]`` bool array of masks.
        mask_mixture (tuple of 5 floats): weights of the structured masks (joint, posterior, likelihood, Bernoulli
            1, Bernoulli 2; default 0.2 each), as the official ``p_joint..p_rnd2``; see ``check_mask_mixture`` for
            when to change them.
        bernoulli_rates (tuple of 2 floats): the rates of the two Bernoulli masks (default 0.3, 0.7), as the
            official ``rnd1_prob``, ``rnd2_prob``.
        z_score (bool): standardize each variable with the training data's mean and std (default ``True``).
        random_state (None | int | Generator): seed of the network initialisation, training and the estimator's own
            sampling stream (default None: fresh entropy), an int, or a numpy or torch Generator (read in ``train``).
            The estimator owns its random streams and never draws from torch's global generator: ``train`` splits
            ``random_state`` into three independent children (``icml24._random.spawn``): initialisation and training
            batches, the fixed validation noise, and sampling when ``sample`` gets no ``random_state``.
        device (str): torch device (default ``"cpu"``).
        support (tuple | None | False): ``(low, high)``, each ``[num_variables]`` in original units (``-inf`` /
            ``inf`` for unbounded entries), e.g. a box prior's bounds; samples outside are rejected and redrawn, the
            rate kept in ``rejection_rate_``. ``None`` (default): the box of ``prior`` when it is bounded (theta
            bounded, x free), else no support handling; ``False``: no support handling even for a bounded prior.
        prior (torch distribution | None): the prior over theta (e.g. ``task.prior()``); a bounded one (a
            ``Uniform`` box, possibly wrapped in ``Independent``) implies the support unless ``support=False``.
        conditionals (array [k, n] | None): condition masks (``True`` = observed) of the conditionals you mean to
            sample, weighted into training: each training row takes one of them (uniformly) with probability
            ``conditional_weight``, else a mask of ``condition_masks``. ``None`` (default): the official mixture only.
        conditional_weight (float): that probability, in [0, 1] (default 0.5; 0 = the official mixture only).

    Bias of the default training: the official mixture trains a conditional that mixes observed theta and x (say
    ``p(theta_2 | theta_1, x)``) only through its two Bernoulli masks, a few percent of the rows (4.2% for 3
    variables), so at a budget that fits the posterior such a conditional can stay biased: on
    ``x = theta_1 theta_2 + 0.1 eps`` the mean of ``p(theta_2 | theta_1 = 0.5, x = 0.3)`` came out 0.43-0.54 against
    the exact 0.589 (see ``check_mask_mixture``). Pass the conditionals you will ask for as
    ``conditionals`` (the ``exact_conditional`` experiment of ``icml24.papers.simformer`` measures both). What remains:
    with ``conditionals=[[1, 0, 1]]`` and the default weight, 3,000 steps of batch 256 on 10^4 simulations gave a mean
    of 0.562 (0.14 exact standard deviations, 4.5 Monte Carlo standard errors of 1,000 samples, below the exact
    0.589) against 0.462 for the official mixture alone at the same budget (quick, seed 0; 0.554 and 0.453 under
    the streams before issue #58); longer training shrinks it.

    Using a learned attribute (``network_``, ``steps_trained_``, ...) or sampling before ``train()`` raises
    ``NotFittedError``; NaN or infinite simulations, observations or conditions raise ``ValueError``.
    """

    _fit_call = "append_simulations(theta, x) and train()"

    def __init__(self, num_variables: int | None = None, graph=None, graph_kind: str | None = None,
                 sde: str = "vesde", num_layers: int = 6, num_heads: int = 4, head_dim: int = 10,
                 widening_factor: int = 3, id_dim: int = 20, value_dim: int = 20, condition_dim: int = 10,
                 time_dim: int = 128, condition_masks="structured", z_score: bool = True, random_state=None,
                 device: str = "cpu", support=None, prior=None, mask_mixture=(0.2, 0.2, 0.2, 0.2, 0.2),
                 bernoulli_rates=(0.3, 0.7), conditionals=None, conditional_weight: float = 0.5):
        # stored as given (scikit-learn's contract: clone, get_params); train() checks them (_check_params)
        self.num_variables, self.graph, self.graph_kind, self.sde = num_variables, graph, graph_kind, sde
        self.num_layers, self.num_heads, self.head_dim, self.widening_factor = (num_layers, num_heads, head_dim,
                                                                                widening_factor)
        self.id_dim, self.value_dim, self.condition_dim, self.time_dim = id_dim, value_dim, condition_dim, time_dim
        self.condition_masks, self.z_score, self.random_state, self.device = (condition_masks, z_score, random_state,
                                                                              device)
        self.support, self.prior = support, prior
        self.mask_mixture, self.bernoulli_rates = mask_mixture, bernoulli_rates
        self.conditionals, self.conditional_weight = conditionals, conditional_weight
        self._data: list[Tensor] = []  # the simulations appended so far (not a parameter: clone starts empty)

    def _check_params(self) -> None:
        """Check the parameters and set what they imply (``graph_kind_``, ``sde_``, ``condition_masks_``,
        ``conditionals_``, ``mask_mixture_``, ``bernoulli_rates_``); the start of ``train``."""
        graph_kind = self.graph_kind or ("dense" if self.graph is None else "undirected")
        if graph_kind not in GRAPH_KINDS:
            raise ValueError(f"graph_kind must be one of {GRAPH_KINDS}, got {graph_kind!r}")
        if graph_kind != "dense" and self.graph is None:
            raise ValueError(f"graph_kind={graph_kind!r} needs a graph (the simulator's DAG); pass graph=... "
                             "or use graph_kind='dense'")
        if self.graph is not None:
            as_dag(self.graph, self.num_variables)
        conditionals = self.conditionals
        if conditionals is not None:
            if isinstance(conditionals, str):
                raise ValueError("conditionals must be a [k, n] boolean array of masks (True = observed), not a name")
            conditionals = check_condition_masks(conditionals)
        check_finite("conditional_weight", self.conditional_weight)
        if not 0.0 <= self.conditional_weight <= 1.0:
            raise ValueError(f"conditional_weight must lie in [0, 1], got {self.conditional_weight}")
        for name, size in self._network_kwargs().items():  # a zero or negative size would train a degenerate network
            check_positive_int(name, size)
        self.condition_masks_ = check_condition_masks(self.condition_masks)
        self.mask_mixture_, self.bernoulli_rates_ = check_mask_mixture(self.mask_mixture, self.bernoulli_rates)
        self.graph_kind_, self.sde_, self.conditionals_ = graph_kind, make_sde(self.sde), conditionals

    def _network_kwargs(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in ("num_layers", "num_heads", "head_dim", "widening_factor",
                                                      "id_dim", "value_dim", "condition_dim", "time_dim")}

    # ------------------------------------------------------------------ data
    def append_simulations(self, theta: Tensor, x: Tensor) -> Simformer:
        """Add simulations ``theta: [N, num_theta]``, ``x: [N, num_x]`` (stored as the joint ``[theta, x]``)."""
        theta, x = check_finite("theta", _as_2d(theta, "theta")), check_finite("x", _as_2d(x, "x"))
        if theta.shape[0] != x.shape[0]:
            raise ValueError(f"theta has {theta.shape[0]} rows but x has {x.shape[0]}; pass one x per theta")
        earlier = self.__dict__.get("num_theta_")  # set by an earlier append_simulations
        if earlier is not None and earlier != theta.shape[1]:
            raise ValueError(f"theta has {theta.shape[1]} columns, earlier simulations had {earlier}")
        self.num_theta_ = theta.shape[1]
        return self.append_joint(torch.cat([theta, x], dim=1))

    def append_joint(self, joint: Tensor) -> Simformer:
        """Add joint samples ``[N, num_variables]`` (any variables, not only theta and x)."""
        joint = check_finite("joint", _as_2d(joint, "joint"))
        if joint.shape[0] == 0:
            raise ValueError("joint has no rows; append at least one simulation")
        if self._data and joint.shape[1] != self._data[0].shape[1]:
            raise ValueError(f"got {joint.shape[1]} variables, earlier data had {self._data[0].shape[1]}")
        self._data.append(joint)
        return self

    # -------------------------------------------------------------- training
    def _seeds(self) -> tuple[int, int, int]:
        """Int seeds of (initialisation and training, the fixed validation noise, sampling): three independent
        children of ``random_state`` (``SeedSequence.spawn``; deterministic for an int)."""
        return tuple(seed_int(child) for child in spawn(self.random_state, 3))

    def _build(self, data: Tensor, seed: int) -> None:
        if self.num_variables is not None and data.shape[1] != self.num_variables:
            raise ValueError(f"the data have {data.shape[1]} variables but num_variables={self.num_variables}")
        self.num_variables_ = data.shape[1]
        if self.conditionals_ is not None and self.conditionals_.shape[1] != self.num_variables_:
            raise ValueError(f"conditionals have {self.conditionals_.shape[1]} columns but the data have "
                             f"{self.num_variables_} variables")
        if self.__dict__.get("num_theta_") is None:  # joint data only (append_joint): every variable is theta
            self.num_theta_ = self.num_variables_
        self.graph_ = None if self.graph is None else as_dag(self.graph, self.num_variables_)
        if self.z_score:
            self.mean_, self.std_ = data.mean(0), data.std(0).clamp(min=1e-2)
        else:
            self.mean_, self.std_ = torch.zeros(self.num_variables_), torch.ones(self.num_variables_)
        self.support_, support = None, self.support
        if support is None and self.prior is not None:
            support = _prior_box(self.prior, self.num_theta_, self.num_variables_)
        if support is not None and support is not False:
            low, high = (torch.as_tensor(b, dtype=torch.float32).reshape(-1) for b in support)
            if low.shape[0] != self.num_variables_ or high.shape[0] != self.num_variables_ or (low >= high).any():
                raise ValueError(f"support needs (low, high) with {self.num_variables_} entries each and low < high "
                                 "(use -inf / inf for unbounded variables)")
            self.support_ = (low, high)
        normalized = (data - self.mean_) / self.std_
        self.data_mean_, self.data_var_ = normalized.mean(0), normalized.var(0)
        with torch.random.fork_rng():  # seeded initialisation without touching the caller's global RNG
            torch.manual_seed(seed)
            self.network_ = ScoreTransformer(self.num_variables_, **self._network_kwargs()).to(self.device)

    def _sample_condition_masks(self, batch_size: int, generator: torch.Generator) -> Tensor:
        num_x = self.num_variables_ - self.num_theta_
        masks = sample_condition_masks(self.condition_masks_, batch_size, self.num_theta_, num_x, generator,
                                       self.mask_mixture_, self.bernoulli_rates_)
        if self.conditionals_ is None or self.conditional_weight == 0.0:
            return masks
        # the conditionals the user asks for, weighted in (rows drawn uniformly among them)
        asked = sample_condition_masks(self.conditionals_, batch_size, self.num_theta_, num_x, generator)
        pick = torch.rand(batch_size, generator=generator) < self.conditional_weight
        return torch.where(pick[:, None], asked, masks)

    def loss(self, x0: Tensor, random_state=None, condition_mask: Tensor | None = None) -> Tensor:
        """Denoising score-matching loss (paper Eq. 4) of a normalized batch ``x0: [batch, n]``; ``random_state`` (None,
        an int, a numpy or torch Generator, the latter used as is) draws the times, noise and masks."""
        self._check_fitted()
        generator = torch_generator(random_state)
        batch = x0.shape[0]
        t = self.sde_.t_min + (self.sde_.t_max - self.sde_.t_min) * torch.rand(batch, generator=generator)
        if condition_mask is None:
            condition_mask = self._sample_condition_masks(batch, generator)
        eps = torch.randn(x0.shape, generator=generator)
        edges = batch_attention_masks(self.graph_, self.graph_kind_, condition_mask)
        edges = None if edges is None else edges.to(self.device)

        def score_fn(x_t: Tensor, times: Tensor) -> Tensor:
            return self.network_(x_t.to(self.device), times.to(self.device), condition_mask.to(self.device),
                                 self.sde_.std(times).to(self.device), edges)

        return denoising_loss(score_fn, self.sde_, x0, t, eps, condition_mask)

    def train(self, max_steps: int | None = None, batch_size: int = 1000, learning_rate: float = 1e-3,
              min_learning_rate: float = 1e-6, clip: float = 10.0, validation_fraction: float = 0.05,
              validation_every: int | None = None, validation_repeat: int = 5, patience: float = 0.2,
              smoothing: float = 0.7, progress: Progress | None = None) -> Simformer:
        """Train with Adam, a constant then linearly decaying learning rate, and robust early stopping.

        Args:
            max_steps: gradient steps; default ``clip(3 N, 5000, 100000)`` as in the paper; 0 builds the network
                (and the z-scoring) but leaves it at its initialisation: an untrained score network, a C2ST null.
            batch_size: samples per step (default 1000).
            learning_rate: Adam's initial rate, kept for the first half of training.
            min_learning_rate: the rate at the end, reached by a linear decay over the second half.
            clip: adaptive gradient clipping factor (unit-wise, as ``optax.adaptive_grad_clip``).
            validation_fraction: held-out fraction for early stopping (5%).
            validation_every: steps between checks (``max_steps // 50``).
            validation_repeat: noise draws per held-out sample (5).
            patience: stop once the smoothed validation loss has not improved for this fraction of ``max_steps``
                (default 0.2), restoring the weights of its best check. Stopping is only considered once the
                learning rate decays (second half of training): a plateau at constant rate is not convergence.
            smoothing: weight of the past in the moving average of the (fixed-noise) validation loss (default 0.7;
                0 = raw loss): it removes the check-to-check noise that made a raw patience rule stop one seed at a
                third of its steps.
            progress: ``progress(done, total)`` after each gradient step (``icml24._progress``; e.g.
                ``ctx.progress_callback("Simformer")``); ``total`` is the step budget, early stopping ends sooner.
        """
        self._check_params()
        check_progress(progress)
        if not self._data:
            raise ValueError("no simulations; call append_simulations(theta, x) first")
        if max_steps is not None and max_steps < 0:
            raise ValueError(f"max_steps must be >= 0 (0: no training, or None for the paper's rule), got {max_steps}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        check_positive("learning_rate", learning_rate)
        check_positive("min_learning_rate", min_learning_rate)
        check_positive("clip", clip)
        if not 0.0 < patience <= 1.0 or not 0.0 <= smoothing < 1.0:
            raise ValueError(f"need 0 < patience <= 1 and 0 <= smoothing < 1, got {patience} and {smoothing}")
        if not 0.0 <= validation_fraction < 1.0:
            raise ValueError(f"validation_fraction must lie in [0, 1), got {validation_fraction}")
        data = torch.cat(self._data).float()
        seed, validation_seed, sampling_seed = self._seeds()
        self._build(data, seed)
        generator = torch.Generator().manual_seed(seed)
        self._sampling_generator = torch.Generator().manual_seed(sampling_seed)  # sample() without a random_state
        order = torch.randperm(data.shape[0], generator=generator)
        normalized = ((data - self.mean_) / self.std_)[order]
        num_val = int(validation_fraction * data.shape[0])
        val, train = normalized[:num_val].repeat(validation_repeat, 1), normalized[num_val:]
        steps = int(max_steps if max_steps is not None else min(max(3 * data.shape[0], 5000), 100_000))
        every = validation_every or max(steps // 50, 1)
        optimizer = torch.optim.Adam(self.network_.parameters(), lr=learning_rate)
        half = max(steps // 2, 1)
        decay = min_learning_rate / learning_rate
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: 1.0 if s < half else max(1.0 - (1.0 - decay) * (s - half) / half, decay))
        self.loss_history_, self.validation_history_, self.stopped_early_ = [], [], False
        best, best_state, best_step, average = math.inf, None, 0, None
        patience_steps = max(int(patience * steps), 1)
        self.network_.train()
        step = -1  # no step taken (max_steps=0)
        for step in tracked(range(steps), progress):  # progress(done, total) after each step
            batch = train[torch.randint(0, train.shape[0], (min(batch_size, train.shape[0]),), generator=generator)]
            loss = self.loss(batch, generator)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            _adaptive_grad_clip(self.network_.parameters(), clip)
            optimizer.step()
            scheduler.step()
            value = float(loss.detach())
            self.loss_history_.append(value)
            if num_val and step > max(50, steps // 10) and step % every == 0:
                with torch.no_grad():
                    val_loss = float(self.loss(val, torch.Generator().manual_seed(validation_seed)))
                self.validation_history_.append((step, val_loss))
                # patience in steps on the moving average of the held-out loss; see ``patience`` and ``smoothing``
                average = val_loss if average is None else smoothing * average + (1.0 - smoothing) * val_loss
                if average < best:
                    best, best_state, best_step = average, copy.deepcopy(self.network_.state_dict()), step
                if step >= half and step - best_step > patience_steps:
                    self.network_.load_state_dict(best_state)
                    self.stopped_early_ = True
                    break
        self.steps_trained_ = step + 1
        self.network_.eval()
        return self

    # -------------------------------------------------------------- sampling
    def _check_fitted(self) -> None:
        if "network_" not in self.__dict__:
            raise NotFittedError("this Simformer is not trained yet; call append_simulations(theta, x) and train() "
                                 "first")

    def condition_from(self, condition) -> tuple[Tensor, Tensor]:
        """``{index: value}`` or a ``[n]`` tensor with NaN for free entries -> (mask ``[n]``, values ``[n]``)."""
        self._check_fitted()
        n = self.num_variables_
        if condition is None:
            return torch.zeros(n, dtype=torch.bool), torch.zeros(n)
        if isinstance(condition, dict):
            values = torch.full((n,), float("nan"))
            for index, value in condition.items():
                if not 0 <= int(index) < n:
                    raise ValueError(f"condition index {index} is outside 0..{n - 1}")
                values[int(index)] = float(check_finite(f"condition[{index}]", float(value)))
        else:
            values = torch.as_tensor(condition, dtype=torch.float32).reshape(-1).clone()
            if values.shape[0] != n:
                raise ValueError(f"a condition vector needs {n} entries (NaN = not observed), got {values.shape[0]}")
            if torch.isinf(values).any():
                raise ValueError("condition contains infinite values; use finite values, or NaN for a free entry")
        mask = ~torch.isnan(values)
        if mask.all():
            raise ValueError("every variable is observed; leave at least one free (NaN or missing index)")
        return mask, torch.nan_to_num(values)

    @torch.no_grad()
    def sample(self, num_samples: int, condition=None, method: str = "sde", num_steps: int = 500,
               random_state=None, guidance=None, tolerance: float = 1e-3,
               max_rounds: int = 20) -> Tensor:
        """Samples ``[num_samples, num_variables]`` of the conditional given ``condition`` (observed entries copied).

        Args:
            num_samples: how many samples.
            condition (dict | Tensor | None): ``{index: value}`` over the joint ``[theta, x]``, or a ``[n]`` tensor
                with NaN for free entries, or ``None`` for the joint.
            method: ``"sde"`` (Euler–Maruyama on the reverse SDE, default, the paper's), ``"ode"`` (probability flow,
                Heun with ``num_steps`` steps) or ``"ode_adaptive"`` (probability flow, adaptive RK45 at ``tolerance``).
            num_steps: integration steps of ``"sde"`` / ``"ode"`` (paper and default: 500; the cost is linear in it,
                ``benchmarks/bench_simformer.py`` measures C2ST against it).
            random_state (None | int | Generator): the initial noise and Brownian increments' stream: an int, a numpy
                or torch Generator (a torch one used as is), or None (default): the estimator's own sampling stream,
                seeded by its ``random_state``; successive calls continue it.
            guidance (callable | None): optional log-potential ``c(x, t) -> [num_samples]`` on the joint in
                *original* units (e.g. ``interval_potential``), added to the score as guidance (SDE only).
            tolerance: rtol = atol of ``"ode_adaptive"`` (z-scored).
            max_rounds: rejection rounds (support).

        Sets ``score_evaluations_`` (batched network calls, last round) and ``rejection_rate_`` (outside support).
        """
        mask, values = self.condition_from(condition)
        if method not in SAMPLING_METHODS:
            raise ValueError(f"method must be one of {SAMPLING_METHODS}, got {method!r}")
        if num_samples < 1 or num_steps < 1:
            raise ValueError(f"num_samples and num_steps must be >= 1, got {num_samples} and {num_steps}")
        check_positive("tolerance", tolerance)
        if guidance is not None and method != "sde":
            raise ValueError("guidance needs method='sde'")
        generator = torch_generator(random_state) if random_state is not None else self._sampling_generator
        if self.support_ is None:
            self.rejection_rate_ = 0.0
            return self._draw(num_samples, mask, values, method, num_steps, generator, guidance, tolerance)
        samples, self.rejection_rate_ = rejection_sample(
            lambda count: self._draw(count, mask, values, method, num_steps, generator, guidance, tolerance),
            num_samples, *self.support_, max_rounds)
        return samples

    def _draw(self, num_samples: int, mask: Tensor, values: Tensor, method: str, num_steps: int,
              generator: torch.Generator, guidance, tolerance: float) -> Tensor:
        observed = ((values - self.mean_) / self.std_)[None].expand(num_samples, -1)
        t_max = torch.full((num_samples,), self.sde_.t_max)
        factor, std = self.sde_.mean_factor(t_max)[:, None], self.sde_.std(t_max)[:, None]
        spread = torch.sqrt(factor**2 * self.data_var_ + std**2)
        noise = torch.randn(num_samples, self.num_variables_, generator=generator)
        x_init = torch.where(mask, observed, factor * self.data_mean_ + spread * noise)
        condition_mask = mask[None].expand(num_samples, -1)
        edges = attention_mask(self.graph_, self.graph_kind_, mask.numpy())
        edges = None if edges is None else torch.as_tensor(edges, device=self.device)
        # the network specialised to this one condition (fixed token parts, shared time, free tokens only in the
        # last block unless guidance reads the observed entries' scores): forward's numbers, fewer operations
        network = FixedConditionScore(self.network_, mask, edges, free_only=guidance is None)

        def score_fn(x: Tensor, t: Tensor) -> Tensor:
            return network(x.to(self.device), t.to(self.device), self.sde_.std(t).to(self.device)).cpu()

        normalized_guidance = None if guidance is None else (lambda z, t: guidance(z * self.std_ + self.mean_, t))

        with torch.inference_mode(guidance is None):  # guidance differentiates the potential: no inference tensors
            samples = self._integrate(method, score_fn, x_init, condition_mask, num_steps, generator,
                                      normalized_guidance, tolerance)
        samples = samples * self.std_ + self.mean_
        return torch.where(mask, values, samples)

    def _integrate(self, method: str, score_fn, x_init: Tensor, condition_mask: Tensor, num_steps: int,
                   generator: torch.Generator, normalized_guidance, tolerance: float) -> Tensor:
        if method == "sde":
            samples = euler_maruyama(score_fn, self.sde_, x_init, condition_mask, num_steps, generator,
                                     normalized_guidance)
            self.score_evaluations_ = num_steps
        elif method == "ode":
            samples = probability_flow_ode(score_fn, self.sde_, x_init, condition_mask, num_steps)
            self.score_evaluations_ = 2 * num_steps
        else:
            samples, self.score_evaluations_ = probability_flow_ode_adaptive(score_fn, self.sde_, x_init,
                                                                             condition_mask, tolerance, tolerance)
        return samples

    def sample_posterior(self, num_samples: int, x_observed: Tensor, **kwargs) -> Tensor:
        """``theta ~ p(theta | x_observed)``: ``[num_samples, num_theta]``."""
        x_observed = check_finite("x_observed", torch.as_tensor(x_observed, dtype=torch.float32).reshape(-1))
        self._check_fitted()
        if x_observed.shape[0] != self.num_variables_ - self.num_theta_:
            raise ValueError(f"x_observed needs {self.num_variables_ - self.num_theta_} entries, got "
                             f"{x_observed.shape[0]}")
        condition = {self.num_theta_ + i: float(v) for i, v in enumerate(x_observed)}
        return self.sample(num_samples, condition, **kwargs)[:, : self.num_theta_]

    def sample_likelihood(self, num_samples: int, theta: Tensor, **kwargs) -> Tensor:
        """``x ~ p(x | theta)``: ``[num_samples, num_x]``."""
        theta = check_finite("theta", torch.as_tensor(theta, dtype=torch.float32).reshape(-1))
        self._check_fitted()
        if theta.shape[0] != self.num_theta_:
            raise ValueError(f"theta needs {self.num_theta_} entries, got {theta.shape[0]}")
        return self.sample(num_samples, {i: float(v) for i, v in enumerate(theta)}, **kwargs)[:, self.num_theta_:]


def _prior_box(prior, num_theta: int, num_variables: int):
    """``(low, high)`` over ``[theta, x]`` of a box prior (a ``Uniform``, maybe in ``Independent``), else ``None``."""
    base = prior
    while isinstance(base, torch.distributions.Independent):
        base = base.base_dist
    if not isinstance(base, torch.distributions.Uniform):
        return None
    low, high = (torch.broadcast_to(b, (num_theta,)).float() for b in (base.low, base.high))
    if low.shape[0] != num_theta:
        raise ValueError(f"the prior has {low.shape[0]} dimensions but theta has {num_theta}")
    free = torch.full((num_variables - num_theta,), float("inf"))
    return torch.cat([low, -free]), torch.cat([high, free])


def _as_2d(values, name: str) -> Tensor:
    values = torch.as_tensor(np.asarray(values) if not isinstance(values, Tensor) else values, dtype=torch.float32)
    if values.dim() == 1:
        values = values[:, None]
    if values.dim() != 2:
        raise ValueError(f"{name} must be [num_simulations, dim], got shape {tuple(values.shape)}")
    return values


def _adaptive_grad_clip(parameters, clipping: float, eps: float = 1e-3) -> None:
    """Unit-wise adaptive gradient clipping (Brock et al., 2021): ``|g_u| <= clipping * max(|w_u|, eps)``."""
    for p in parameters:
        if p.grad is None:
            continue
        dims = tuple(range(1, p.dim())) if p.dim() > 1 else None
        weight_norm = p.detach().norm(dim=dims, keepdim=True) if dims else p.detach().norm()
        grad_norm = p.grad.norm(dim=dims, keepdim=True) if dims else p.grad.norm()
        max_norm = clipping * weight_norm.clamp(min=eps)
        p.grad.mul_(torch.where(grad_norm > max_norm, max_norm / grad_norm.clamp(min=1e-6), 1.0))
