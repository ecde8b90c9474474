"""Bit-packed binary masks and the exact storage accounting of TALL-mask compression.

TALL-masks (Wang et al., ICML 2024) store T fine-tuned models as the pre-trained weights ``theta_0``, the
multi-task vector ``tau_MTL`` (both float) and one bit per parameter and task (``np.packbits``), and rebuild
``theta_t = theta_0 + m_t * tau_MTL``. For ``P`` parameters in ``b``-bit floats this costs
``2 b P + T P`` bits instead of ``T b P``: a ratio of ``(2 b + T) / (b T)`` (the scheme behind the paper's 57 Gb
-> 8.2 Gb for 20 ViT-B/32 tasks; official code: ``np.packbits`` in ``tallmask_utils.find_optimal_mask``).
"""

from __future__ import annotations

import numpy as np
import torch

from .task_vectors import StateDictLayout


class PackedMasks:
    """Binary masks ``[T, P]`` stored at one bit per entry (rows padded to whole bytes).

    Args:
        packed (np.ndarray): ``uint8 [T, ceil(P / 8)]``, as made by ``from_bool``.
        num_params (int): ``P``, the unpadded row length.
    """

    def __init__(self, packed: np.ndarray, num_params: int):
        packed = np.asarray(packed)
        if packed.dtype != np.uint8 or packed.ndim != 2:
            raise ValueError("packed must be uint8 [num_tasks, ceil(num_params / 8)]; use PackedMasks.from_bool")
        if packed.shape[1] != -(-num_params // 8):
            raise ValueError(f"{packed.shape[1]} bytes per row cannot hold exactly {num_params} bits")
        self.packed = packed
        self.num_params = int(num_params)

    @classmethod
    def from_bool(cls, masks: torch.Tensor | np.ndarray) -> PackedMasks:
        """Pack a boolean ``[T, P]`` (or ``[P]``) mask."""
        array = masks.detach().cpu().numpy() if torch.is_tensor(masks) else np.asarray(masks)
        if array.dtype != np.bool_:
            raise ValueError(f"masks must be boolean, got dtype {array.dtype}")
        array = np.atleast_2d(array)
        return cls(np.packbits(array, axis=1), array.shape[1])

    @property
    def num_tasks(self) -> int:
        return self.packed.shape[0]

    @property
    def nbytes(self) -> int:
        return int(self.packed.nbytes)

    def unpack(self) -> torch.Tensor:
        """The boolean masks ``[T, P]``."""
        bits = np.unpackbits(self.packed, axis=1, count=self.num_params)
        return torch.from_numpy(bits.astype(bool))

    def __getitem__(self, task: int) -> torch.Tensor:
        """The boolean mask ``[P]`` of one task."""
        return torch.from_numpy(np.unpackbits(self.packed[task], count=self.num_params).astype(bool))

    def __repr__(self) -> str:
        return f"PackedMasks(num_tasks={self.num_tasks}, num_params={self.num_params}, nbytes={self.nbytes})"


def storage_bits(num_params: int, num_tasks: int, float_bits: int = 32) -> dict[str, float]:
    """Ideal storage of T separate checkpoints vs. ``theta_0 + tau_MTL + T`` one-bit masks.

    Returns ``separate_bits = T b P``, ``compressed_bits = 2 b P + T P`` and their ``ratio = (2 b + T) / (b T)``.
    """
    if num_params <= 0 or num_tasks <= 0 or float_bits <= 0:
        raise ValueError("num_params, num_tasks and float_bits must be positive")
    separate = float(num_tasks * float_bits * num_params)
    compressed = float(2 * float_bits * num_params + num_tasks * num_params)
    return {"separate_bits": separate, "compressed_bits": compressed, "ratio": compressed / separate}


class CompressedCheckpoints:
    """T task models held as ``theta_0``, ``tau_MTL`` and packed TALL masks; each rebuilt on demand.

    Args:
        pretrained (Tensor ``[P]``): ``theta_0``.
        multitask_vector (Tensor ``[P]``): ``tau_MTL`` (the unscaled multi-task vector the masks were built on).
        masks (PackedMasks): one mask per task.
        layout (StateDictLayout, optional): to return state dicts from ``reconstruct``.
        template (state dict, optional): supplies non-float entries (integer buffers) of rebuilt state dicts.
    """

    def __init__(self, pretrained: torch.Tensor, multitask_vector: torch.Tensor, masks: PackedMasks,
                 layout: StateDictLayout | None = None, template=None):
        if pretrained.shape != multitask_vector.shape or pretrained.numel() != masks.num_params:
            raise ValueError("pretrained, multitask_vector and masks must cover the same number of parameters")
        self.pretrained = pretrained
        self.multitask_vector = multitask_vector
        self.masks = masks
        self.layout = layout
        self._template = template

    @property
    def num_tasks(self) -> int:
        return self.masks.num_tasks

    def reconstruct(self, task: int):
        """``theta_0 + m_t * tau_MTL`` (coefficient 1): a state dict if a layout was given, else a vector."""
        vector = self.pretrained + self.masks[task].to(self.multitask_vector.dtype) * self.multitask_vector
        return vector if self.layout is None else self.layout.unflatten(vector, like=self._template)

    @property
    def nbits(self) -> int:
        """Bits actually held: the two float vectors and the packed masks (with their byte padding)."""
        return 8 * (self.pretrained.element_size() * self.pretrained.numel()
                    + self.multitask_vector.element_size() * self.multitask_vector.numel() + self.masks.nbytes)

    @property
    def separate_nbits(self) -> int:
        """Bits that T separate checkpoints in the same float format would take."""
        return 8 * self.num_tasks * self.pretrained.element_size() * self.pretrained.numel()

    def __repr__(self) -> str:
        return (f"CompressedCheckpoints(num_tasks={self.num_tasks}, num_params={self.masks.num_params}, "
                f"ratio={self.nbits / self.separate_nbits:.4f})")
