"""Label-word tasks: seeded demonstration draws, disjoint from the calibration and test items (needs the
vaderSentiment/countryinfo wheels that ship the data)."""

import numpy as np
import pytest

from icml24.llm import LabelWordTask, load_task

pytest.importorskip("countryinfo")


def test_demonstration_draws_are_disjoint_and_seeded():
    task = load_task("hemisphere")
    cal, test = task.draw(10, 30, shots=2, random_state=3)
    again_cal, again = task.draw(10, 30, shots=2, random_state=3)
    _, other = task.draw(10, 30, shots=2, random_state=4)
    assert len(cal) == 10 and len(test) == 30 and test.prompts == again.prompts and cal.prompts == again_cal.prompts
    assert test.prompts != other.prompts
    assert cal.context == "" and all(p == cal.instruction + q for p, q in zip(cal.prompts, cal.queries))  # zero-shot
    assert test.context.count("Country:") == 2 and test.context.endswith("\n\n")  # two solved demonstrations
    assert all(p == test.instruction + test.context + q for p, q in zip(test.prompts, test.queries))
    assert test.instruction.startswith("Classify") and "'northern' or 'southern'" in test.instruction
    questions = set(cal.queries) | set(test.queries)
    assert len(questions) == 40 and not any(q in test.context for q in questions)  # demos, calibration, test disjoint
    rest, _ = task.draw(10, 0, shots=0, random_state=3)
    assert len(task.draw(10, 0, shots=1, random_state=3)[1]) == len(task) - 11 and len(rest) == 10
    with pytest.raises(ValueError, match="fewer"):
        task.draw(100, 100, shots=1, random_state=0)
    with pytest.raises(ValueError, match="shots"):
        task.draw(1, 1, shots=-1, random_state=0)


def test_demonstrations_end_with_their_label_word_and_chance_is_uniform():
    task = load_task("continent")
    _, test = task.draw(0, 5, shots=1, random_state=0)
    demo_query, answer = test.context.rstrip("\n").rsplit(" ", 1)
    assert answer in test.choices[0] and demo_query.startswith("Country: ") and demo_query.endswith("Continent:")
    assert task.chance == pytest.approx(0.2)


def test_an_int_random_state_is_default_rng_of_it_and_fixes_the_distractors():
    task = load_task("hemisphere")
    cal, test = task.split(10, 20, random_state=5)
    again_cal, again = task.split(10, 20, random_state=np.random.default_rng(5))
    assert cal.queries == again_cal.queries and test.queries == again.queries
    assert load_task("capital", random_state=0).queries == load_task("capital", random_state=0).queries  # same seed
    assert load_task("capital", random_state=1).queries != load_task("capital", random_state=0).queries


@pytest.mark.parametrize("choices,labels,message", [
    ([["yes", ""]] * 2, [0, 1], "non-empty label words"),  # an empty label word: its first token is a space
    ([["yes", 3]] * 2, [0, 1], "non-empty label words"),  # a non-string word
    (["yn", "yn"], [0, 1], "non-empty label words"),  # a string, not a list of words
    ([["yes", "yes"]] * 2, [0, 1], "repeats a label word"),  # duplicate choices: two right answers
    ([["yes", "no"]] * 2, [0, 2], r"labels must lie in \[0, 2\)"),  # a label past the choices
    ([["yes", "no"]] * 2, [-1, 0], r"labels must lie in \[0, 2\)"),
    ([["yes", "no"]] * 2, [0.5, 1], "integer indices"),  # a fractional label was truncated to 0
])
def test_label_word_task_refuses_bad_choices_and_labels(choices, labels, message):
    with pytest.raises(ValueError, match=message):
        LabelWordTask("t", ["q1", "q2"], choices, labels)
    good = LabelWordTask("t", ["q1", "q2"], [["yes", "no"]] * 2, [0.0, 1.0])
    assert good.labels.tolist() == [0, 1] and good.chance == 0.5
