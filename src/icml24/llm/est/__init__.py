"""EST: Evolving Subnetwork Training for large language models (Li et al., ICML 2024).

- ``model``: ``GPT`` whose forward runs a ``Subnetwork`` (sliced heads/MLP units with
  1/p rescaling, skipped layers).
- ``schedule``: ``EvolvingSubnetworkSchedule`` (stages of p_L, p_H, p_M) and the per-step
  ``SubnetworkSampler``.
- ``flops``: analytic FLOPs per step and a measured count (``torch.utils.flop_counter``).
- ``training``: ``EvolvingSubnetworkTrainer`` (progress, checkpoint/resume, held-out loss).
"""

from .flops import layer_forward_flops, measured_flops, schedule_flops, subnetwork_flops
from .model import GPT, GPTConfig, Subnetwork
from .schedule import EvolvingSubnetworkSchedule, Stage, SubnetworkSampler
from .training import EvolvingSubnetworkTrainer, fit_lockstep

__all__ = [
    "GPT",
    "EvolvingSubnetworkSchedule",
    "EvolvingSubnetworkTrainer",
    "GPTConfig",
    "Stage",
    "Subnetwork",
    "SubnetworkSampler",
    "fit_lockstep",
    "layer_forward_flops",
    "measured_flops",
    "schedule_flops",
    "subnetwork_flops",
]
