"""Procedural scenes: objects where the caption says, tokens in the vocabulary, disjoint prompt splits."""

import numpy as np
import pytest

from icml24.generative.rpg.scenes import (
    COLORS,
    OBJECTS,
    all_prompts,
    caption,
    object_centers,
    render,
    sample_scenes,
    split_prompts,
    tokenize,
)


def test_objects_are_drawn_in_reading_order_with_their_colour():
    image = render(["red circle", "blue square", "green triangle", "yellow square"])
    for (cy, cx), colour in zip(object_centers(4), ["red", "blue", "green", "yellow"]):
        assert np.allclose(image[:, int(cy + 1), int(cx + 0.5)], COLORS[colour])
    assert np.allclose(image[:, 8, 8], -1)  # the background between slots stays black


def test_shapes_differ_in_area():
    areas = [(render([f"red {s}"]) [0] > 0).sum() for s in ("circle", "square", "triangle")]
    assert len(set(areas)) == 3


def test_tokenize_and_refusals():
    tokens = tokenize(["red circle and blue square", ""])
    assert tokens.shape == (2, 12) and (tokens[1] == 0).all() and (tokens[0, :5] > 0).all()
    with pytest.raises(ValueError, match="vocabulary"):
        tokenize(["purple circle"])
    with pytest.raises(ValueError, match="1, 2 or 4"):
        object_centers(3)


def test_scene_mix_and_prompt_splits():
    images, captions = sample_scenes(60, np.random.default_rng(0))
    assert images.shape == (60, 3, 16, 16) and images.min() >= -1 and images.max() <= 1
    assert {len(c.split(" and ")) for c in captions} == {1, 2, 4}
    validation, test = split_prompts(2, 24)
    assert len(validation) == 24 and len(test) == len(all_prompts(2)) - 24 == 108
    assert not set(validation) & set(test)
    assert split_prompts(2, 24) == (validation, test)  # fixed once
    assert caption(list(validation[0])) in {f"{a} and {b}" for a in OBJECTS for b in OBJECTS}
    with pytest.raises(ValueError):
        split_prompts(2, 200)
