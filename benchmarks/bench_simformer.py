"""Simformer training throughput and sampling time next to sbi's NPE (NSF) training time, in one run.

    .venv/bin/python benchmarks/bench_simformer.py [--budget 10000] [--steps 200] [--npe-epochs 5]

Both methods see the same gaussian_linear simulations (10 + 10 dims) on the same CPU threads.
"""

from __future__ import annotations

import argparse
import time

import torch

from icml24.sbi import Simformer, c2st, get_task


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=10000)
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--sampling-steps", type=int, default=100)
    parser.add_argument("--npe-epochs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    task = get_task("gaussian_linear")
    generator = torch.Generator().manual_seed(0)
    joint = task.simulate_joint(args.budget, generator)
    theta, x = joint[:, :10], joint[:, 10:]
    x_o = task.observation(1)
    reference = task.reference_posterior(x_o, args.samples, generator)

    model = Simformer(graph=task.graph, num_layers=args.layers).append_simulations(theta, x)
    start = time.perf_counter()
    model.train(max_steps=args.steps, batch_size=args.batch_size, validation_fraction=0.0)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    samples = model.sample_posterior(args.samples, x_o, num_steps=args.sampling_steps, generator=generator)
    sample_seconds = time.perf_counter() - start

    from sbi.inference import NPE
    from sbi.neural_nets import posterior_nn

    prior = torch.distributions.MultivariateNormal(torch.zeros(10), 0.1 * torch.eye(10))
    npe = NPE(prior=prior, density_estimator=posterior_nn("nsf", hidden_features=50, num_transforms=5, num_bins=10),
              show_progress_bars=False)
    start = time.perf_counter()
    estimator = npe.append_simulations(theta, x).train(max_num_epochs=args.npe_epochs, training_batch_size=200)
    npe_seconds = time.perf_counter() - start
    posterior = npe.build_posterior(estimator)
    start = time.perf_counter()
    npe_samples = posterior.sample((args.samples,), x=x_o, show_progress_bars=False)
    npe_sample_seconds = time.perf_counter() - start
    npe_steps = args.npe_epochs * int(0.9 * args.budget / 200)

    print(f"simformer: {args.steps} steps (batch {args.batch_size}, {args.layers} layers) in {train_seconds:.1f}s "
          f"= {args.steps / train_seconds:.1f} steps/s; {args.samples} samples x {args.sampling_steps} EM steps in "
          f"{sample_seconds:.1f}s; C2ST {c2st(samples, reference):.3f}")
    print(f"npe (nsf): {args.npe_epochs} epochs (~{npe_steps} steps of batch 200) in {npe_seconds:.1f}s "
          f"= {npe_steps / npe_seconds:.1f} steps/s; {args.samples} samples in {npe_sample_seconds:.2f}s; "
          f"C2ST {c2st(npe_samples, reference):.3f}")
    print(f"ratio simformer/npe seconds per gradient step: "
          f"{(train_seconds / args.steps) / (npe_seconds / max(npe_steps, 1)):.2f}; "
          f"sampling time ratio: {sample_seconds / max(npe_sample_seconds, 1e-9):.1f}")


if __name__ == "__main__":
    main()
