import torch
import torch.nn.functional as F

from icml24.graph.distill.losses import (
    class_embedding_means,
    discrimination_loss,
    eigenbasis_matching_loss,
    eigenbasis_matching_loss_naive,
    orthogonality_loss,
    subspace_directions,
)


def test_identity_equals_naive_tensor_form_value_and_gradient():
    g = torch.Generator().manual_seed(0)
    u_real, x_real = torch.randn(40, 5, generator=g, dtype=torch.float64), torch.rand(40, 7, generator=g,
                                                                                       dtype=torch.float64)
    a = subspace_directions(u_real, x_real)
    u = torch.randn(9, 5, generator=g, dtype=torch.float64, requires_grad=True)
    x = torch.randn(9, 7, generator=g, dtype=torch.float64, requires_grad=True)
    fast = eigenbasis_matching_loss(a, subspace_directions(u, x))
    grad_fast = torch.autograd.grad(fast, [u, x])
    naive = eigenbasis_matching_loss_naive(a, subspace_directions(u, x))
    grad_naive = torch.autograd.grad(naive, [u, x])
    torch.testing.assert_close(fast, naive, rtol=1e-12, atol=1e-14)
    for gf, gn in zip(grad_fast, grad_naive):
        torch.testing.assert_close(gf, gn, rtol=1e-10, atol=1e-14)
    # unnormalized rows too (the identity holds for any vectors)
    b = torch.randn(5, 7, generator=g, dtype=torch.float64)
    torch.testing.assert_close(eigenbasis_matching_loss(2 * a, b), eigenbasis_matching_loss_naive(2 * a, b))


def test_matching_loss_zero_iff_same_lines():
    a = F.normalize(torch.randn(4, 6), dim=1)
    assert eigenbasis_matching_loss(a, -a).abs() < 1e-6  # a a^T is sign-invariant
    assert eigenbasis_matching_loss(a, a.roll(1, dims=0)) > 1e-3


def test_orthogonality_and_discrimination():
    q, _ = torch.linalg.qr(torch.randn(10, 4, dtype=torch.float64))
    assert orthogonality_loss(q) < 1e-20
    assert abs(orthogonality_loss(2 * q).item() - 9 * 4 / 16) < 1e-12  # (4-1)^2 on 4 of 16 entries
    eye = torch.eye(3)
    assert discrimination_loss(eye, eye) == 0
    assert abs(discrimination_loss(eye, torch.zeros(3, 3)).item() - 3 / 9) < 1e-7


def test_class_means_match_loop():
    g = torch.Generator().manual_seed(1)
    u, x, lam = torch.randn(12, 3, generator=g), torch.rand(12, 5, generator=g), torch.rand(3, generator=g)
    labels, rows = torch.tensor([0, 1, 1, 2, 0]), torch.tensor([0, 3, 4, 7, 9])
    emb = u @ torch.diag(1 - lam) @ u.T @ x
    expected = torch.stack([F.normalize(emb[rows[labels == c]].mean(0), dim=0) for c in range(3)])
    torch.testing.assert_close(class_embedding_means(lam, u, x, labels, 3, rows=rows), expected)
