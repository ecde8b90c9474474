"""Record GDEM parity numbers from the official code (liuyang-tian/GDEM): the eigenbasis-matching loss and a few
distillation steps of ``GraphAgent.train`` on fixed small inputs.

The official code is CUDA-only (``.cuda()`` everywhere) and imports deeprobust/torch_sparse at module level for
functions these cases never call; the recorder stubs those two modules, makes ``Tensor.cuda`` the identity, and
skips the post-training GNN evaluation and the ``torch.save`` of the result (``test_with_val`` -> 0, run in a
temporary folder). The losses and the Adam steps are the official lines, unchanged.
Run: ``ICML24_PEERS=/work/peers .venv/bin/python tools/parity/record_gdem.py``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

N, N_TRAIN, N_SYN, K, D, C = 40, 15, 9, 6, 5, 3
SEED = 0


def inputs() -> dict[str, np.ndarray]:
    """Fixed inputs: a random graph's normalized-Laplacian eigenpairs (3 smallest, 3 largest), non-negative
    row-normalized features, labels, and synthetic U' (orthonormalized Gaussian) and X' (Gaussian)."""
    rng = np.random.default_rng(SEED)
    a = np.triu((rng.random((N, N)) < 0.15).astype(float), 1)
    a = a + a.T
    a[np.arange(N - 1), np.arange(1, N)] = a[np.arange(1, N), np.arange(N - 1)] = 1.0  # a path keeps it connected
    deg = a.sum(1)
    lap = np.eye(N) - a / np.sqrt(np.outer(deg, deg))
    vals, vecs = np.linalg.eigh(lap)
    pick = np.r_[0:3, N - 3:N]
    x = rng.random((N, D))
    x = x / x.sum(1, keepdims=True)
    y = np.r_[np.arange(C).repeat(N_TRAIN // C), rng.integers(0, C, N - N_TRAIN)]
    u_syn, _ = np.linalg.qr(rng.normal(size=(N_SYN, K)))
    x_syn = rng.normal(size=(N_SYN, D)) * 0.1
    y_syn = np.arange(C).repeat(N_SYN // C)
    return dict(eigenvalues=vals[pick], eigenvectors=vecs[:, pick], x=x, y=y, train=np.arange(N_TRAIN),
                u_syn=u_syn, x_syn=x_syn, y_syn=y_syn)


def stub_modules() -> None:
    for name in ("deeprobust", "deeprobust.graph", "deeprobust.graph.utils", "torch_sparse", "gdown"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["deeprobust.graph.utils"].sparse_mx_to_torch_sparse_tensor = None
    sys.modules["torch_sparse"].SparseTensor = None
    torch.Tensor.cuda = lambda self, *a, **k: self  # CPU run of CUDA-only code


def main() -> None:
    path = official_copy("GDEM", "agent.py")
    stub_modules()
    import agent  # official
    import utils  # official

    torch.set_default_dtype(torch.float32)
    inp = inputs()
    t = {k: torch.as_tensor(v, dtype=torch.long if k in ("y", "train", "y_syn") else torch.float32)
         for k, v in inp.items()}
    co_real = utils.get_subspace_covariance_matrix(t["eigenvectors"], t["x"])
    co_syn = utils.get_subspace_covariance_matrix(t["u_syn"], t["x_syn"])
    start = time.perf_counter()
    loss_e = torch.nn.functional.mse_loss(co_syn, co_real)
    seconds = time.perf_counter() - start
    embed_sum = utils.get_embed_sum(t["eigenvalues"], t["eigenvectors"], t["x"])[t["train"]]
    mean_real = utils.get_embed_mean(embed_sum, t["y"][t["train"]])

    recipe = {"generator": "tools/parity/record_gdem.py:inputs (numpy default_rng(0)); arrays stored here",
              **{k: v.tolist() for k, v in inp.items()}}
    cases = [{"name": "eigenbasis_matching_loss", "call": "F.mse_loss(utils.get_subspace_covariance_matrix(U', X'), "
              "utils.get_subspace_covariance_matrix(U, X))", "inputs": recipe,
              "values": {"loss": float(loss_e), "real_class_means": mean_real.tolist()},
              "tolerance": 1e-6, "official_seconds": seconds}]

    for name, epochs, e1, e2 in (("step_eigenvectors", 1, 1, 1), ("steps_u_x_x", 3, 1, 2)):
        args = types.SimpleNamespace(lr_feat=5e-2, lr_eigenvec=5e-2, epoch=epochs, alpha=1.0, beta=0.5, gamma=0.5,
                                     e1=e1, e2=e2, eigen_k=K)
        ga = agent.GraphAgent.__new__(agent.GraphAgent)
        ga.args, ga.n_syn, ga.d = args, N_SYN, D
        ga.data = types.SimpleNamespace(adj_full=None, num_classes=C)
        ga.x_syn = torch.nn.Parameter(t["x_syn"].clone())
        ga.eigenvecs_syn = torch.nn.Parameter(t["u_syn"].clone())
        ga.y_syn = t["y_syn"]
        ga.test_with_val = lambda *a, **k: 0.0
        agent.normalize_adj_to_sparse_tensor = lambda mx: mx
        cwd = os.getcwd()
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            ga.args.dataset, ga.args.reduction_rate, ga.args.expID = "fixture", 0.5, 0
            try:
                ga.train(t["eigenvalues"], co_real, mean_real)
            finally:
                os.chdir(cwd)
        cases.append({"name": name, "call": f"agent.GraphAgent.train (epoch={epochs}, e1={e1}, e2={e2})",
                      "inputs": {"from_case": "eigenbasis_matching_loss", **{k: v for k, v in vars(args).items()}},
                      "values": {"eigenvectors": ga.eigenvecs_syn.detach().tolist(),
                                 "features": ga.x_syn.detach().tolist()},
                      "tolerance": 1e-5})
    write_fixture("gdem", "liuyang-tian/GDEM", commit_of(path), cases,
                  notes="CPU run of the CUDA-only official code: Tensor.cuda is the identity, deeprobust/torch_sparse "
                        "stubbed (unused here), post-training GNN evaluation skipped; float32.")


if __name__ == "__main__":
    main()
