import numpy as np
import pytest
import torch

from icml24.rl.failures import Concept, ConceptGrid, digit_concepts


def _digit():
    img = torch.zeros(1, 8, 8)
    img[0, 1:7, 3] = 1.0  # a vertical bar
    return img


def test_grid_enumerates_every_combination_first_concept_slowest():
    grid = digit_concepts()
    assert grid.num_actions == 125 and grid.shape == (5, 5, 5)
    assert len({tuple(v) for v in grid.values}) == 125
    assert grid.action_of((4, 0, 1)) == 4 * 25 + 0 * 5 + 1
    assert tuple(grid.coordinates[grid.action_of((4, 0, 1))]) == (4, 0, 1)
    with pytest.raises(ValueError, match="outside the grid"):
        grid.action_of((5, 0, 0))


def test_identity_values_leave_the_image_unchanged_and_each_concept_acts():
    grid = ConceptGrid([Concept("rotation", (0.0, 90.0), 1.0), Concept("shift", (0.0, 2.0), 1.0),
                        Concept("darken", (0.0, 0.5), 0.1), Concept("blur", (0.0, 1.0), 0.1)])
    img = _digit()
    assert torch.allclose(grid.perturb(img, [[0, 0, 0, 0]]), img, atol=1e-6)
    rot = grid.perturb(img, [[90, 0, 0, 0]])[0]
    assert torch.allclose(rot, img[0].T.flip(0), atol=1e-5) or torch.allclose(rot, img[0].T.flip(1), atol=1e-5)
    shifted = grid.perturb(img, [[0, 2, 0, 0]])[0]
    assert torch.allclose(shifted[:, 5], img[0, :, 3], atol=1e-6)  # moved two pixels right
    assert torch.allclose(grid.perturb(img, [[0, 0, 0.5, 0]]), 0.5 * img)
    blurred = grid.perturb(img, [[0, 0, 0, 1.0]])[0]
    assert blurred[3, 3] < 1.0 and blurred[3, 2] > 0 and abs(float(blurred.sum() - img.sum())) < 0.2  # zero padding


def test_batched_perturbation_equals_one_at_a_time():
    grid = digit_concepts()
    images = torch.rand(6, 8, 8)
    actions = np.array([0, 7, 31, 62, 99, 124])
    batch = grid.perturb_actions(images, actions)
    single = torch.cat([grid.perturb_actions(images[i:i + 1], actions[i:i + 1]) for i in range(6)])
    assert torch.allclose(batch, single, atol=1e-6)
    assert batch.min() >= 0 and batch.max() <= 1


def test_bad_inputs_say_what_to_fix():
    with pytest.raises(ValueError, match="unknown concept kind"):
        Concept("saturation", (0.5,), 0.05)
    with pytest.raises(ValueError, match="NaN"):
        Concept("blur", (float("nan"),), 0.1)
    with pytest.raises(ValueError, match="once"):
        ConceptGrid([Concept("blur", (0.0,), 0.1), Concept("blur", (1.0,), 0.1)])
    with pytest.raises(ValueError, match="actions must lie"):
        digit_concepts().perturb_actions(torch.zeros(1, 8, 8), [125])
    with pytest.raises(ValueError, match="levels must be one of"):
        digit_concepts("huge")


def test_a_users_own_transformation_runs_after_the_builtins_and_is_checked():
    contrast = Concept("contrast", (1.0, 0.5), fn=lambda x, v: (x - 0.5) * v[:, None, None] + 0.5)
    grid = ConceptGrid([Concept("darken", (0.0, 0.5), 0.05), contrast])
    images = torch.rand(4, 8, 8)
    out = grid.perturb_actions(images, np.array([0, 1, 2, 3]))
    torch.testing.assert_close(out[0], images[0])                          # darken 0, contrast 1: identity
    torch.testing.assert_close(out[1], (images[1] - 0.5) * 0.5 + 0.5)
    torch.testing.assert_close(out[3], ((images[3] * 0.5 - 0.5) * 0.5 + 0.5).clamp(0, 1))  # darken, then contrast
    with pytest.raises(ValueError, match="fn=callable"):
        Concept("contrast", (1.0,))
    with pytest.raises(TypeError, match="callable"):
        Concept("contrast", (1.0,), fn=3)
    with pytest.raises(ValueError, match="built-in"):
        Concept("blur", (1.0,), fn=lambda x, v: x)
    shrink = ConceptGrid([Concept("crop", (1.0,), fn=lambda x, v: x[:, 1:])])
    with pytest.raises(ValueError, match="shape"):
        shrink.perturb_actions(images, np.zeros(4, dtype=int))
    nan = ConceptGrid([Concept("nan", (1.0,), fn=lambda x, v: x * float("nan"))])
    with pytest.raises(ValueError, match="NaN"):
        nan.perturb_actions(images, np.zeros(4, dtype=int))
