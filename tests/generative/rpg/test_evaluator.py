"""The per-slot attribute classifier: slot crops sit on the objects; a trained classifier reads clean scenes."""

import numpy as np
import pytest
import torch

from icml24._validation import NotFittedError
from icml24.generative.rpg.evaluator import NONE, CellClassifier, crop_slots
from icml24.generative.rpg.scenes import OBJECTS, render, render_jittered


def test_slot_crops_cover_each_object():
    image = torch.as_tensor(render(["red circle", "blue square", "green triangle", "yellow circle"]))[None]
    crops = crop_slots(image, 4)
    assert crops.shape == (1, 4, 3, 8, 8)
    assert crops[0, 1, 2].max() == 1 and crops[0, 1, 0].max() == -1  # slot 1 is blue, not red
    assert crop_slots(image, 2).shape == (1, 2, 3, 8, 8)


@pytest.fixture(scope="module")
def classifier():
    return CellClassifier(num_train=2500, epochs=5, random_state=np.random.default_rng(0)).fit()


def test_reads_clean_scenes_and_state_round_trips(classifier):
    rng = np.random.default_rng(1)
    prompts = [tuple(OBJECTS[j] for j in rng.permutation(12)[:4]) for _ in range(24)]
    images = torch.as_tensor(np.stack([render_jittered(list(p), rng) for p in prompts])).float()
    assert classifier.binding_accuracy(images, prompts) >= 0.75
    assert classifier.holdout_accuracy_ >= 0.75
    empty = -torch.ones(3, 3, 16, 16)
    assert classifier.binding_accuracy(empty, prompts[:3]) == 0.0  # nothing drawn: nothing bound
    again = CellClassifier.from_state(classifier.state())
    assert torch.equal(again.slot_correct(images, prompts), classifier.slot_correct(images, prompts))
    assert int(NONE) == 12


def test_refuses_nan_and_use_before_fit(classifier):
    with pytest.raises(NotFittedError):
        _ = CellClassifier().net_
    bad = torch.zeros(1, 3, 16, 16)
    bad[0, 0, 0, 0] = float("nan")
    with pytest.raises(ValueError, match="images"):
        classifier.slot_correct(bad, [("red circle", "blue square")])


def test_single_object_fidelity_finds_the_object_wherever_it_sits(classifier):
    rng = np.random.default_rng(2)
    entities = [OBJECTS[j] for j in rng.integers(0, 12, size=24)]
    images = torch.as_tensor(np.stack([render_jittered([e], rng, slots=[int(rng.integers(0, 6))]) for e in entities]))
    assert classifier.object_fidelity(images.float(), entities) >= 0.75
    shifted = entities[1:] + entities[:1]  # the right drawings read against other prompts
    assert classifier.object_fidelity(images.float(), shifted) <= 0.25
    assert classifier.object_fidelity(-torch.ones(3, 3, 16, 16), entities[:3]) == 0.0
    with pytest.raises(ValueError, match="one entity per image"):
        classifier.object_fidelity(images.float(), entities[:3])


def test_crops_see_their_own_region_only():
    """Three objects in 5- and 6-pixel thirds: a crop blanks its neighbours' pixels."""
    image = torch.as_tensor(render(["red circle", "blue square", "green triangle"]))[None]
    crops = crop_slots(image, 3)
    assert crops.shape == (1, 3, 3, 8, 8)
    red, blue, green = (crops[0, j] for j in range(3))
    assert red[0].max() == 1 and red[2].max() == -1 and red[1].max() == -1  # only red in slot 0
    assert blue[2].max() == 1 and blue[0].max() == -1
    assert green[1].max() == 1 and green[2].max() == -1
    assert crop_slots(image, 5).shape == (1, 5, 3, 8, 8)


@pytest.mark.parametrize("k", [3, 5])
def test_reads_three_and_five_object_scenes_and_separates_placement(classifier, k):
    rng = np.random.default_rng(k)
    prompts = [tuple(OBJECTS[j] for j in rng.permutation(12)[:k]) for _ in range(24)]
    images = torch.as_tensor(np.stack([render_jittered(list(p), rng) for p in prompts])).float()
    scores = classifier.binding_scores(images, prompts)
    assert scores["in_place"].mean() >= 0.7 and (scores["anywhere"] >= scores["in_place"]).all()
    swapped = [p[1:] + p[:1] for p in prompts]  # the right objects, each in another's slot
    moved = classifier.binding_scores(images, swapped)
    assert moved["in_place"].mean() <= 0.2  # placement is wrong ...
    assert moved["anywhere"].mean() >= scores["anywhere"].mean() - 1e-6  # ... binding is not
    with pytest.raises(ValueError, match="as many prompts"):
        classifier.binding_scores(images, prompts[:3])
