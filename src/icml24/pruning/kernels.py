"""A fused CPU kernel (numba) for the gradient of K small masked MLPs on one shared minibatch (Zhang & Papyan,
ICML 2024: the search trains thousands of 2-3-3-3-1 networks at once).

``torch.baddbmm`` calls one tiny GEMM per network and layer (12 per training step with the backward pass): for
widths of 3 its per-call cost, not arithmetic, sets the speed (about 12 us per network and step). This kernel runs
each network's forward and backward pass on the minibatch in a cache-sized scratch, vectorised over the points,
and writes dL/dW and dL/db (the loss: the network's batch-mean BCE with logits, masked weights and biases in the
forward pass, as ``BatchedMaskedMLP.forward``). Equal to torch autograd within float32 rounding (1e-5 relative,
tested in tests/pruning/test_kernels.py); the order of the sums over points differs, so trajectories agree only
to rounding. The caller keeps the torch path for GPU tensors, other dtypes and other layer counts.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Networks wider than this train through ``torch.baddbmm`` (a real GEMM per network wins there).
MAX_WIDTH = 32


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _layer_forward(a, w, m, b, bm, z):
    """z[o, :] = sum_i (w m)[o, i] a[i, :] + (b bm)[o] (Eq.: one masked linear layer, points on the last axis)."""
    out, inp = w.shape
    for o in range(out):
        bias = b[o] * bm[o]
        for p in range(a.shape[1]):
            z[o, p] = bias
        for i in range(inp):
            e = w[o, i] * m[o, i]
            if e != 0.0:
                for p in range(a.shape[1]):
                    z[o, p] += e * a[i, p]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def _layer_backward(a, w, m, bm, delta, gw, gb, prev, z_prev, need_prev):
    """dL/dW = (delta a^T) m, dL/db = (sum_p delta) bm; the delta of the layer below through its ReLU."""
    out, inp = w.shape
    n = a.shape[1]
    for o in range(out):
        s = 0.0
        for p in range(n):
            s += delta[o, p]
        gb[o] = s * bm[o]
        for i in range(inp):
            if m[o, i] != 0.0:
                t = 0.0
                for p in range(n):
                    t += delta[o, p] * a[i, p]
                gw[o, i] = t * m[o, i]
            else:
                gw[o, i] = 0.0
    if need_prev:
        for i in range(inp):
            for p in range(n):
                prev[i, p] = 0.0
        for o in range(out):
            for i in range(inp):
                e = w[o, i] * m[o, i]
                if e != 0.0:
                    for p in range(n):
                        prev[i, p] += e * delta[o, p]
        for i in range(inp):
            for p in range(n):
                if not z_prev[i, p] > 0.0:  # ReLU'(z) = 1 for z > 0 (torch's threshold_backward)
                    prev[i, p] = 0.0


@njit(cache=True, nogil=True, error_model="numpy")
def _relu(z, a):
    for o in range(z.shape[0]):
        for p in range(z.shape[1]):
            a[o, p] = max(z[o, p], np.float32(0.0))


@njit(cache=True, nogil=True, error_model="numpy")
def _sgd(p, g, v, lr, momentum, weight_decay, first):
    """torch.optim.SGD on one network's parameter: d = g + lambda w, v = d (first step) or mu v + d, w -= lr v."""
    for j in range(p.size):
        d = g.flat[j] + weight_decay * p.flat[j]
        v.flat[j] = d if first else momentum * v.flat[j] + d
        p.flat[j] -= lr * v.flat[j]


@njit(cache=True, nogil=True, fastmath={"reassoc", "contract"}, error_model="numpy")
def mlp_step(xt, y, w1, w2, w3, w4, b1, b2, b3, b4, m1, m2, m3, m4, bm1, bm2, bm3, bm4,
             g1, g2, g3, g4, gb1, gb2, gb3, gb4, v1, v2, v3, v4, vb1, vb2, vb3, vb4, lrs, momentum, weight_decay,
             first, update):
    """For each of K networks 2 -> d1 -> d2 -> d3 -> out on the points xt [2, B] with 0/1 labels y [B]: the
    gradient of its batch-mean BCE with logits into g* [K, out, in] and gb* [K, out], then (``update``) its SGD
    step with learning rate lrs[k] and momentum buffers v*, vb*."""
    n = xt.shape[1]
    d1, d2, d3, d4 = w1.shape[1], w2.shape[1], w3.shape[1], w4.shape[1]
    z1, z2, z3 = np.empty((d1, n), np.float32), np.empty((d2, n), np.float32), np.empty((d3, n), np.float32)
    a1, a2, a3 = np.empty((d1, n), np.float32), np.empty((d2, n), np.float32), np.empty((d3, n), np.float32)
    z4 = np.empty((d4, n), np.float32)
    e1, e2, e3 = np.empty((d1, n), np.float32), np.empty((d2, n), np.float32), np.empty((d3, n), np.float32)
    scale = np.float32(1.0 / (n * d4))
    mu, wd = np.float32(momentum), np.float32(weight_decay)
    for k in range(w1.shape[0]):
        _layer_forward(xt, w1[k], m1[k], b1[k], bm1[k], z1)
        _relu(z1, a1)
        _layer_forward(a1, w2[k], m2[k], b2[k], bm2[k], z2)
        _relu(z2, a2)
        _layer_forward(a2, w3[k], m3[k], b3[k], bm3[k], z3)
        _relu(z3, a3)
        _layer_forward(a3, w4[k], m4[k], b4[k], bm4[k], z4)
        for o in range(d4):  # d BCE-with-logits / d z = (sigmoid(z) - y) / (B out)
            for p in range(n):
                z4[o, p] = (np.float32(1.0) / (np.float32(1.0) + np.exp(-z4[o, p])) - y[p]) * scale
        _layer_backward(a3, w4[k], m4[k], bm4[k], z4, g4[k], gb4[k], e3, z3, True)
        _layer_backward(a2, w3[k], m3[k], bm3[k], e3, g3[k], gb3[k], e2, z2, True)
        _layer_backward(a1, w2[k], m2[k], bm2[k], e2, g2[k], gb2[k], e1, z1, True)
        _layer_backward(xt, w1[k], m1[k], bm1[k], e1, g1[k], gb1[k], e1, z1, False)
        if update:
            lr = np.float32(lrs[k])
            _sgd(w1[k], g1[k], v1[k], lr, mu, wd, first)
            _sgd(w2[k], g2[k], v2[k], lr, mu, wd, first)
            _sgd(w3[k], g3[k], v3[k], lr, mu, wd, first)
            _sgd(w4[k], g4[k], v4[k], lr, mu, wd, first)
            _sgd(b1[k], gb1[k], vb1[k], lr, mu, wd, first)
            _sgd(b2[k], gb2[k], vb2[k], lr, mu, wd, first)
            _sgd(b3[k], gb3[k], vb3[k], lr, mu, wd, first)
            _sgd(b4[k], gb4[k], vb4[k], lr, mu, wd, first)


def supported(model) -> bool:
    """Whether ``model`` (a BatchedMaskedMLP) trains through the kernel: 4 float32 CPU layers, 2 inputs, widths
    at most ``MAX_WIDTH``."""
    import torch

    tensors = list(model.weights) + list(model.biases) + list(model.masks) + list(model.bias_masks)
    return (model.num_layers == 4 and model.widths[0] == 2 and max(model.widths[1:-1]) <= MAX_WIDTH
            and all(t.device.type == "cpu" and t.dtype == torch.float32 for t in tensors))


def _numpy(tensors) -> list[np.ndarray]:
    return [np.ascontiguousarray(t.detach().numpy()) for t in tensors]


class FusedSGD:
    """SGD (momentum, weight decay; torch.optim.SGD's update) of a BatchedMaskedMLP through ``mlp_step``.

    ``state`` is a ``torch.optim.SGD`` over the same parameters that is never stepped: it holds the momentum
    buffers (``state[p]["momentum_buffer"]``, from the first step on) for callbacks that edit them (RigL)."""

    def __init__(self, model, momentum: float = 0.9, weight_decay: float = 5e-4):
        import torch

        self.model, self.momentum, self.weight_decay = model, float(momentum), float(weight_decay)
        self.params = list(model.weights) + list(model.biases)
        for p in self.params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
        self.buffers = [torch.zeros_like(p) for p in self.params]
        self.state = torch.optim.SGD(self.params, lr=1.0, momentum=momentum, weight_decay=weight_decay)
        self._arrays = [t.detach().numpy() for t in self.params + [p.grad for p in self.params] + self.buffers]
        self._masks, self._mask_arrays, self.first = None, None, True

    def step(self, x, y, lrs, update: bool = True) -> None:
        """One step on the minibatch (x [B, 2], y [B, 1]) with learning rates lrs [K] (float32 numpy)."""
        if self._masks is not self.model.masks:  # a callback installed new masks
            self._masks = self.model.masks
            self._mask_arrays = _numpy(list(self.model.masks) + list(self.model.bias_masks))
        xt = np.ascontiguousarray(x.detach().numpy().T, np.float32)
        yv = np.ascontiguousarray(y.detach().numpy().reshape(-1), np.float32)
        a = self._arrays
        mlp_step(xt, yv, *a[0:8], *self._mask_arrays, *a[8:16], *a[16:24], lrs, self.momentum, self.weight_decay,
                 self.first, update)
        if update and self.first:
            for p, v in zip(self.params, self.buffers):
                self.state.state[p]["momentum_buffer"] = v
            self.first = False


def fill_gradients(model, x, y) -> None:
    """Write the gradient of every network's batch-mean BCE with logits on (x [B, 2], y [B, 1]) into ``.grad``
    of ``model``'s weights and biases (allocated on first use), as ``loss.backward()`` would on fresh grads."""
    FusedSGD(model).step(x, y, np.zeros(model.num_networks, np.float32), update=False)
