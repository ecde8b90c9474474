"""Recaption and plan (RPG, Sec. 3.1-3.2): the planner's output format, its parser and a rule-based planner.

The MLLM of the paper writes a chain of thought that ends in two lines,
``Final split ratio: <ratio>`` and ``Regional Prompt: p0 BREAK p1 BREAK ...``. ``parse_plan`` reads any planner's
answer in that format; ``RuleBasedPlanner`` stands in for the MLLM on the closed vocabulary of the local model
(colour + shape entities joined by "and" or commas), writing the same format with its reasoning.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .layout import RegionLayout, grid_layout, parse_split_ratio

BREAK = "BREAK"
_RATIO = re.compile(r"Final split ratio:\s*([\d.,;\s]+)")
_PROMPTS = re.compile(r"Regional Prompt:\s*(.*?)(?=\n\s*\n|\Z)", re.DOTALL)


@dataclass(frozen=True)
class RegionPlan:
    """A planned layout: the base prompt, the split ratio, and one sub-prompt per region (row-major)."""

    base_prompt: str
    split_ratio: str
    regional_prompts: tuple[str, ...]

    @property
    def layout(self) -> RegionLayout:
        return parse_split_ratio(self.split_ratio)

    def __post_init__(self):
        n = self.layout.num_regions
        if n != len(self.regional_prompts):
            raise ValueError(f"split ratio {self.split_ratio!r} has {n} regions but {len(self.regional_prompts)} "
                             "regional prompts were given; the planner must emit one prompt per region")

    @property
    def prompt(self) -> str:
        """The pipeline's prompt: base prompt and regional prompts joined by BREAK (each chunk encoded alone)."""
        return f" {BREAK} ".join([self.base_prompt, *self.regional_prompts])


def parse_plan(text: str, base_prompt: str = "") -> RegionPlan:
    """Read a planner answer (``Final split ratio: ...`` and ``Regional Prompt: ... BREAK ...``) into a plan."""
    ratio, prompts = _RATIO.search(text), _PROMPTS.search(text)
    if ratio is None or prompts is None:
        missing = "Final split ratio" if ratio is None else "Regional Prompt"
        raise ValueError(f"planner answer has no '{missing}:' line; it must end with 'Final split ratio: <ratio>' "
                         "and 'Regional Prompt: p0 BREAK p1 ...'")
    parts = tuple(p.strip() for p in prompts.group(1).strip().split(BREAK))
    return RegionPlan(base_prompt, ratio.group(1).strip().rstrip("."), parts)


def split_entities(prompt: str) -> list[str]:
    """The entities of a compositional prompt, in reading order: 'a red circle and a blue square' -> 2."""
    parts = re.split(r",|\band\b", prompt.lower())
    out = []
    for part in parts:
        words = [w for w in part.split() if w not in {"a", "an", "the"}]
        if words:
            out.append(" ".join(words))
    return out


def default_layout(num_entities: int) -> RegionLayout:
    """Up to three entities side by side in one row; more go in a near-square grid filled row by row."""
    if num_entities < 1:
        raise ValueError("a plan needs at least one entity")
    if num_entities <= 3:
        return grid_layout(1, num_entities)
    cols = math.ceil(math.sqrt(num_entities))
    rows = math.ceil(num_entities / cols)
    if rows * cols != num_entities:
        widths = [tuple([1.0 / cols] * cols)] * (rows - 1) + [tuple([1.0 / (num_entities - cols * (rows - 1))]
                                                                    * (num_entities - cols * (rows - 1)))]
        return RegionLayout(tuple([1.0 / rows] * rows), tuple(widths))
    return grid_layout(rows, cols)


class RuleBasedPlanner:
    """A deterministic planner in place of the MLLM: entities in reading order, one region each.

    Args:
        recaption (callable | None): map an entity to its detailed sub-prompt (the recaptioning step); identity by
            default, since the local model's vocabulary has nothing to add.
    """

    def __init__(self, recaption=None):
        self.recaption = recaption or (lambda entity: entity)

    def think(self, prompt: str) -> str:
        """The chain of thought, ending in the paper's two output lines."""
        entities = split_entities(prompt)
        layout = default_layout(len(entities))
        lines = [f"Caption: {prompt}", "Key entities identification:"]
        lines += [f"{k + 1}). {e}" for k, e in enumerate(entities)]
        lines += [f"So we need to split the image into {len(entities)} subregions.",
                  "Plan the structure split for the image:", "a. Rows"]
        lines += [f"Row{r}(height={h:.2g})" for r, h in enumerate(layout.row_heights)]
        lines.append("b. Regions with rows:")
        k = 0
        for r, widths in enumerate(layout.cell_widths):
            for w in widths:
                lines.append(f"Region{k}: (Row{r},width={w:.2g}) {self.recaption(entities[k])}")
                k += 1
        lines.append(f"Final split ratio: {layout.to_ratio()}")
        lines.append(f"Regional Prompt: {f' {BREAK} '.join(self.recaption(e) for e in entities)}")
        return "\n".join(lines)

    def plan(self, prompt: str) -> RegionPlan:
        return parse_plan(self.think(prompt), base_prompt=prompt)


def plan_edits(plan: RegionPlan, region_correct: list[bool]) -> str:
    """Closed-loop re-planning (reconstruction): the evaluator's verdict per region becomes 'modify' operations in
    text, one line per wrong region, ending with the regions to regenerate."""
    if len(region_correct) != len(plan.regional_prompts):
        raise ValueError(f"{len(region_correct)} verdicts for {len(plan.regional_prompts)} regions")
    wrong = [k for k, ok in enumerate(region_correct) if not ok]
    lines = [f"Modify Region{k}: regenerate '{plan.regional_prompts[k]}'" for k in wrong]
    lines.append("Regenerate regions: " + (",".join(map(str, wrong)) if wrong else "none"))
    return "\n".join(lines)


def parse_edits(text: str) -> list[int]:
    """The region indices of a ``plan_edits`` answer."""
    match = re.search(r"Regenerate regions:\s*([\d,]+|none)", text)
    if match is None:
        raise ValueError("edit plan has no 'Regenerate regions:' line")
    return [] if match.group(1) == "none" else [int(k) for k in match.group(1).split(",")]
