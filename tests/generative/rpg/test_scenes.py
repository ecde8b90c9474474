"""Procedural scenes: objects where the caption says, tokens in the vocabulary, disjoint prompt splits."""

import numpy as np
import pytest

from icml24.generative.rpg.scenes import (
    COLORS,
    OBJECTS,
    all_prompts,
    caption,
    object_boxes,
    object_centers,
    render,
    render_jittered,
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


def test_render_is_canonical_and_render_jittered_draws_from_its_random_state():
    entities = ["red circle", "blue square"]
    canonical = render(entities)
    assert np.array_equal(canonical, render(entities))  # no randomness at all
    jittered = render_jittered(entities, 4)
    assert not np.array_equal(jittered, canonical)
    assert np.array_equal(jittered, render_jittered(entities, np.random.default_rng(4)))  # an int: default_rng(int)
    rng = np.random.default_rng(4)  # a Generator is used as is: the second scene continues its stream
    assert np.array_equal(render_jittered(entities, rng), jittered)
    assert not np.array_equal(render_jittered(entities, rng), jittered)
    with pytest.raises(TypeError):  # the old call render(entities, rng) is refused, not silently canonical
        render(entities, np.random.default_rng(0))


def test_tokenize_and_refusals():
    tokens = tokenize(["red circle and blue square", ""])
    assert tokens.shape == (2, 17) and (tokens[1] == 0).all() and (tokens[0, :5] > 0).all()
    with pytest.raises(ValueError, match="vocabulary"):
        tokenize(["purple circle"])
    with pytest.raises(ValueError, match="1 to 6 objects"):
        object_centers(7)
    with pytest.raises(ValueError, match="1 to 6 objects"):
        object_centers(0)


def test_scene_mix_and_prompt_splits():
    images, captions = sample_scenes(60, np.random.default_rng(0))
    assert images.shape == (60, 3, 16, 16) and images.min() >= -1 and images.max() <= 1
    assert {len(c.split(" and ")) for c in captions} == {1, 2, 3, 4, 5}
    validation, test = split_prompts(2, 24, random_state=0)
    assert len(validation) == 24 and len(test) == len(all_prompts(2)) - 24 == 108
    assert not set(validation) & set(test)
    assert split_prompts(2, 24, random_state=0) == (validation, test)  # the same seed, the same split
    assert caption(list(validation[0])) in {f"{a} and {b}" for a in OBJECTS for b in OBJECTS}
    with pytest.raises(ValueError):
        split_prompts(2, 200)


@pytest.mark.parametrize("k", [3, 5, 6])
def test_every_planner_count_puts_each_object_inside_its_region(k):
    """3 entities: vertical thirds (edges 0, 5, 10, 16); 5: three over two; each object drawn within its box."""
    entities = [OBJECTS[j] for j in (0, 4, 8, 2, 6, 10)[:k]]
    image = render_jittered(entities, np.random.default_rng(k))
    boxes = object_boxes(k)
    assert len(boxes) == k
    if k == 3:
        assert [b[2:] for b in boxes] == [(0, 5), (5, 10), (10, 16)]
    for j, (t, b, left, r) in enumerate(boxes):
        region = image[:, t:b, left:r]
        colour = entities[j].split()[0]
        own = np.all(np.isclose(region, np.asarray(COLORS[colour])[:, None, None]), axis=0)
        assert own.sum() >= 4  # the object is drawn in its region ...
        for other in {e.split()[0] for e in entities} - {colour}:  # ... and no other colour leaks in
            assert not np.all(np.isclose(region, np.asarray(COLORS[other])[:, None, None]), axis=0).any()


def test_two_and_four_object_scenes_are_unchanged():
    """The regions of 2 and 4 objects are the halves and quadrants, objects at full size."""
    assert object_centers(2) == [(7.5, 3.5), (7.5, 11.5)]
    assert object_centers(4) == [(3.5, 3.5), (3.5, 11.5), (11.5, 3.5), (11.5, 11.5)]
