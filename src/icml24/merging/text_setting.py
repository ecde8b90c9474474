"""A merging setting on text: one pre-trained encoder, several text tasks, their zero-shot heads and fine-tuning.

``TextMergingSetting`` holds what the TALL-masks protocol needs (``icml24.merging.evaluation``): the
pre-trained weights ``theta_0`` as one flat vector, ``finetune`` giving ``theta_t`` for a task, and
``evaluator`` scoring any flat vector on a task's validation or test split with the task's frozen head.
"""

from __future__ import annotations

import torch

from icml24._random import RandomState

from .task_vectors import StateDictLayout
from .text_encoder import EncoderEvaluator, finetune, load_encoder, tokenize, zero_shot_head
from .text_tasks import TEXT_TASKS, text_tasks


class TextMergingSetting:
    """The encoder (``"minilm"`` or ``"tiny"``), the tasks ``names`` with their splits, heads and tokens.

    Args:
        names (sequence of str): task names from ``TEXT_TASKS``, in order (task ``t`` is ``names[t]``).
        size (str): ``"minilm"`` (pre-trained, 22.7M) or ``"tiny"`` (random 2-layer BERT, for tests).
        num_train, num_val, num_test (int): examples per split (class-balanced validation and test).
        max_length (int): tokens per text (truncated).
        random_state (None, an int or a numpy Generator): draws the splits (and the tiny model's weights); an int
            fixes them (``icml24._random.seed_int``).
    """

    KIND = "environment"  # icml24._contract

    def __init__(self, names=TEXT_TASKS[:8], size: str = "minilm", num_train: int = 256, num_val: int = 64,
                 num_test: int = 128, max_length: int = 32, random_state: RandomState = None):
        self.model, self.tokenizer = load_encoder(size, random_state)
        self.tasks = text_tasks(list(names), num_train, num_val, num_test, random_state)
        self.base_state = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        self.layout = StateDictLayout.from_state_dict(self.base_state)
        self.theta0 = self.layout.flatten(self.base_state)
        self.heads = [zero_shot_head(self.model, self.tokenizer, task.class_names) for task in self.tasks]
        data = {split: [(tokenize(self.tokenizer, task.texts[split], max_length),
                         torch.from_numpy(task.labels[split])) for task in self.tasks]
                for split in ("train", "val", "test")}
        self.train = data.pop("train")
        self.evaluator = EncoderEvaluator(self.model, self.layout, self.heads, data)

    def finetune(self, task: int, steps: int, lr: float, random_state: RandomState = None, batch_size: int = 16,
                 weight_decay: float = 0.1) -> torch.Tensor:
        """``theta_t`` (flat) after ``steps`` AdamW minibatches on task ``task`` from ``theta_0`` (minibatches drawn
        from ``random_state``)."""
        batch, labels = self.train[task]
        state = finetune(self.model, self.base_state, batch, labels, self.heads[task], steps, lr, random_state,
                         batch_size, weight_decay)
        return self.layout.flatten(state)

    def accuracy(self, vector: torch.Tensor, task: int, split: str = "val") -> float:
        return self.evaluator.accuracy(vector, task, split)
