"""The planner's output format: the rule-based planner writes it, the parser reads it (and the paper's examples)."""

import pytest

from icml24.generative.rpg.planner import (
    RegionPlan,
    RuleBasedPlanner,
    default_layout,
    parse_edits,
    parse_plan,
    plan_edits,
    split_entities,
)

PAPER_STYLE = """Caption: A girl with white ponytail and black dress are chatting with a blonde curly hair girl.
Plan the structure split for the image: ...
Final split ratio: 1,1,1;1,1,1
Regional Prompt: White ponytail girl BREAK Blonde curly hair girl BREAK Her black dress BREAK Her white dress

Some trailing remark the parser must ignore."""


def test_parses_a_paper_style_answer():
    plan = parse_plan(PAPER_STYLE, base_prompt="two girls")
    assert plan.split_ratio == "1,1,1;1,1,1" and plan.layout.shape == (2, 2)
    assert plan.regional_prompts == ("White ponytail girl", "Blonde curly hair girl", "Her black dress",
                                     "Her white dress")
    assert plan.prompt.startswith("two girls BREAK White ponytail girl BREAK")


def test_rule_based_planner_emits_the_paper_format_and_round_trips():
    planner = RuleBasedPlanner()
    text = planner.think("a red circle and a blue square, green triangle and yellow circle")
    assert "Final split ratio: 0.5,0.5,0.5;0.5,0.5,0.5" in text  # 2 x 2: each row is 'height,width,width'
    lines = text.splitlines()
    assert lines[-2].startswith("Final split ratio: ") and lines[-1].startswith("Regional Prompt: ")
    plan = planner.plan("a red circle and a blue square, green triangle and yellow circle")
    assert plan.regional_prompts == ("red circle", "blue square", "green triangle", "yellow circle")
    assert plan.layout.shape == (2, 2)
    two = planner.plan("red circle and blue square")
    assert two.split_ratio == "0.5,0.5" and two.layout.shape == (2,)


def test_entities_and_layouts():
    assert split_entities("A red circle, the blue square and a green triangle") == ["red circle", "blue square",
                                                                                    "green triangle"]
    assert default_layout(1).shape == (1,) and default_layout(3).shape == (3,)
    assert default_layout(4).shape == (2, 2) and default_layout(5).shape == (3, 2)
    assert default_layout(6).shape == (3, 3)
    with pytest.raises(ValueError):
        default_layout(0)


def test_mismatched_plans_and_missing_lines_are_refused():
    with pytest.raises(ValueError, match="one prompt per region"):
        RegionPlan("x", "1,1,1;1,1,1", ("a", "b"))
    with pytest.raises(ValueError, match="Final split ratio"):
        parse_plan("Regional Prompt: a BREAK b")
    with pytest.raises(ValueError, match="Regional Prompt"):
        parse_plan("Final split ratio: 1,1")


def test_edit_plan_names_exactly_the_wrong_regions():
    plan = RuleBasedPlanner().plan("red circle and blue square and green triangle and yellow circle")
    text = plan_edits(plan, [True, False, True, False])
    assert "Modify Region1: regenerate 'blue square'" in text
    assert parse_edits(text) == [1, 3]
    assert parse_edits(plan_edits(plan, [True] * 4)) == []
    with pytest.raises(ValueError):
        plan_edits(plan, [True])
