import numpy as np
import pytest

from icml24.merging.text_tasks import TEXT_TASKS, text_task, text_tasks


@pytest.mark.parametrize("name", TEXT_TASKS)
def test_every_task_has_disjoint_labelled_splits(name):
    task = text_task(name, num_train=64, num_val=16, num_test=32, random_state=0)
    assert task.label_source and task.num_classes >= 2
    sizes = {s: len(task.texts[s]) for s in ("train", "val", "test")}
    assert 0 < sizes["val"] <= 16 and 0 < sizes["test"] <= 32 and 0 < sizes["train"] <= 64
    for split, texts in task.texts.items():
        assert len(texts) == len(task.labels[split]) and all(isinstance(t, str) and t for t in texts)
        assert task.labels[split].min() >= 0 and task.labels[split].max() < task.num_classes
    seen = [set(task.texts[s]) for s in ("train", "val", "test")]
    assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])


def test_validation_and_test_are_class_balanced():
    task = text_task("province_region", num_val=50, num_test=100, random_state=0)
    assert np.bincount(task.labels["val"], minlength=5).tolist() == [10] * 5  # 4361 provinces, 5 regions
    assert np.bincount(task.labels["test"], minlength=5).tolist() == [20] * 5


@pytest.mark.parametrize("name", TEXT_TASKS)
def test_every_class_keeps_texts_for_training(name):
    # the old split drew all 14 CFA-franc countries into validation and test: fine-tuning never saw the class
    task = text_task(name, random_state=0)
    train = np.bincount(task.labels["train"], minlength=task.num_classes)
    seen = np.bincount(np.concatenate(list(task.labels.values())), minlength=task.num_classes)
    assert (train >= 0.4 * seen).all(), (name, train.tolist(), seen.tolist())


def test_labels_follow_their_stated_source():
    task = text_task("sentiment", num_train=200, random_state=0)
    words = dict(zip(task.texts["train"], task.labels["train"]))
    assert task.class_names == ["negative", "positive"]
    assert words.get("wonderful", 1) == 1 and words.get("horrible", 0) == 0
    currency = text_task("currency", num_train=200, random_state=0)
    named = dict(zip(sum(currency.texts.values(), []), np.concatenate(list(currency.labels.values()))))
    assert currency.class_names[named["France"]] == "euro" and currency.class_names[named["Senegal"]] == "CFA franc"


def test_same_seed_same_split_and_seed_moves_it():
    a, b = text_task("play_genre", random_state=3), text_task("play_genre", random_state=3)
    assert a.texts == b.texts
    assert text_task("play_genre", random_state=4).texts["test"] != a.texts["test"]


def test_small_corpora_shrink_every_split_in_proportion():
    task = text_task("currency", num_train=1000, num_val=100, num_test=100, random_state=0)  # 239 countries
    assert sum(len(v) for v in task.texts.values()) <= 239 and len(task.texts["val"]) == len(task.texts["test"])


def test_bad_arguments_name_themselves():
    with pytest.raises(ValueError, match="unknown text task"):
        text_task("imagenet")
    with pytest.raises(ValueError, match="num_val"):
        text_task("sentiment", num_val=0)
    assert [t.name for t in text_tasks(TEXT_TASKS[:2], 8, 4, 4, random_state=0)] == list(TEXT_TASKS[:2])
