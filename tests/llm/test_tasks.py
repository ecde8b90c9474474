"""Label-word tasks: seeded demonstration draws, disjoint from the calibration and test items (needs the
vaderSentiment/countryinfo wheels that ship the data)."""

import pytest

from icml24.llm import load_task

pytest.importorskip("countryinfo")


def test_demonstration_draws_are_disjoint_and_seeded():
    task = load_task("hemisphere")
    cal, test = task.draw(10, 30, shots=2, seed=3)
    again, _ = task.draw(10, 30, shots=2, seed=3)
    other, _ = task.draw(10, 30, shots=2, seed=4)
    assert len(cal) == 10 and len(test) == 30 and cal.prompts == again.prompts and cal.prompts != other.prompts
    context = cal.prompts[0][: cal.prompts[0].rindex("Question:")]
    assert context.count("Question:") == 2 and all(p.startswith(context) for p in cal.prompts + test.prompts)
    questions = {p[len(context):] for p in cal.prompts} | {p[len(context):] for p in test.prompts}
    assert len(questions) == 40 and not any(q in context for q in questions)  # demos, calibration, test disjoint
    rest, _ = task.draw(10, 0, shots=0, seed=3)
    assert len(task.draw(10, 0, shots=1, seed=3)[1]) == len(task) - 11 and len(rest) == 10
    with pytest.raises(ValueError, match="fewer"):
        task.draw(100, 100, shots=1, seed=0)
    with pytest.raises(ValueError, match="shots"):
        task.draw(1, 1, shots=-1, seed=0)
