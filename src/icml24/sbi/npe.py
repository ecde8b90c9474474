"""Neural posterior estimation (NPE) with sbi's neural spline flow: the Simformer paper's baseline (its Fig. 3).

A thin estimator around ``sbi.inference.NPE`` with the interface of ``Simformer``
(``append_simulations`` -> ``train`` -> ``sample_posterior``). sbi draws its network initialisation, batches and
samples from torch's global generator, so every call here runs inside ``torch.random.fork_rng`` with a seed of its
own: results depend on ``random_state`` (and the ``random_state`` passed to ``sample_posterior``) only, and the
caller's global random state is left as it was.

Example::

    npe = NPE(prior=task.prior(), random_state=0).append_simulations(theta, x).train(max_epochs=50)
    samples = npe.sample_posterior(1000, x_o, random_state=1)
"""

from __future__ import annotations

import time

import torch
from torch import Tensor

from icml24._estimator import Sampler
from icml24._random import seed_int, torch_generator
from icml24._validation import FittedAttributes, NotFittedError, check_finite


class NPE(FittedAttributes, Sampler):
    """sbi's NPE with a neural spline flow (the sbi benchmark's default sizes), seeded without global RNG.

    Args:
        prior: a torch distribution over theta (e.g. ``task.prior()``); it bounds the posterior's support.
        hidden_features, num_transforms, num_bins: sizes of the neural spline flow (defaults 50, 5, 10, as sbi's
            benchmark configuration).
        random_state: seed of the initialisation and training (default None: fresh entropy): an int seeds torch
            directly (the streams of the former ``seed``); a numpy or torch Generator gives one int draw per ``train``.

    Attributes (after ``train``):
        posterior_: sbi's ``DirectPosterior``.
        epochs_ (int): epochs trained (early stopping on sbi's validation loss, or ``max_epochs``).
        seconds_ (float): wall time of training.
    """

    _fit_call = "append_simulations(theta, x) and train()"

    def __init__(self, prior: torch.distributions.Distribution, hidden_features: int = 50, num_transforms: int = 5,
                 num_bins: int = 10, random_state=None):
        self.prior = prior
        self.hidden_features, self.num_transforms, self.num_bins = hidden_features, num_transforms, num_bins
        self.random_state = random_state
        self._theta: list[Tensor] = []
        self._x: list[Tensor] = []

    def append_simulations(self, theta: Tensor, x: Tensor) -> NPE:
        """Add simulations ``theta: [N, num_theta]``, ``x: [N, num_x]``."""
        theta = check_finite("theta", torch.as_tensor(theta, dtype=torch.float32))
        x = check_finite("x", torch.as_tensor(x, dtype=torch.float32))
        if theta.dim() != 2 or x.dim() != 2 or theta.shape[0] != x.shape[0]:
            raise ValueError(f"theta and x must be [N, dim] with the same N, got {tuple(theta.shape)} and "
                             f"{tuple(x.shape)}")
        self._theta.append(theta)
        self._x.append(x)
        return self

    def train(self, max_epochs: int | None = None, batch_size: int = 200, learning_rate: float = 5e-4) -> NPE:
        """Train to sbi's early-stopping convergence, or for at most ``max_epochs`` epochs."""
        from sbi.inference import NPE as SbiNPE
        from sbi.neural_nets import posterior_nn

        if not self._theta:
            raise ValueError("no simulations; call append_simulations(theta, x) first")
        if max_epochs is not None and max_epochs < 1:
            raise ValueError(f"max_epochs must be >= 1 (or None: train to convergence), got {max_epochs}")
        start = time.perf_counter()
        with torch.random.fork_rng(devices=[]):  # sbi draws from the global generator: seed it, then restore it
            torch.manual_seed(seed_int(self.random_state))
            inference = SbiNPE(prior=self.prior, show_progress_bars=False,
                               density_estimator=posterior_nn("nsf", hidden_features=self.hidden_features,
                                                              num_transforms=self.num_transforms,
                                                              num_bins=self.num_bins))
            estimator = inference.append_simulations(torch.cat(self._theta), torch.cat(self._x)).train(
                max_num_epochs=max_epochs or 2**31 - 1, training_batch_size=batch_size, learning_rate=learning_rate)
            self.posterior_ = inference.build_posterior(estimator)
        self.epochs_ = int(inference.epoch)
        self.seconds_ = time.perf_counter() - start
        return self

    def sample_posterior(self, num_samples: int, x_observed: Tensor,
                         random_state=None) -> Tensor:
        """``theta ~ q(theta | x_observed)``: ``[num_samples, num_theta]``; ``random_state`` (None, an int, a numpy or
        torch Generator) seeds the draw."""
        x_observed = check_finite("x_observed", torch.as_tensor(x_observed, dtype=torch.float32).reshape(1, -1))
        if "posterior_" not in self.__dict__:
            raise NotFittedError(f"this NPE is not trained yet; call {self._fit_call} first")
        seed = int(torch.randint(0, 2**62, (1,), generator=torch_generator(random_state)))
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return self.posterior_.sample((num_samples,), x=x_observed, show_progress_bars=False)

    def __repr__(self) -> str:
        return (f"NPE(hidden_features={self.hidden_features}, num_transforms={self.num_transforms}, "
                f"num_bins={self.num_bins}, random_state={self.random_state!r})")
