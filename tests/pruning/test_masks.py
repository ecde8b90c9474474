"""Eligible masks (no empty row or column, one per permutation class) and the dead-path counter on hand-made masks."""

from itertools import permutations

import pytest
import torch

from icml24.pruning import check_eligible, count_eligible, dead_path_counts, eligible_masks, is_eligible


def test_a_mask_with_an_empty_row_or_column_is_rejected():
    with pytest.raises(ValueError, match=r"empty rows \[1\]"):
        check_eligible(torch.tensor([[1, 0], [0, 0], [0, 1]]))
    with pytest.raises(ValueError, match=r"empty columns \[2\]"):
        check_eligible(torch.tensor([[1, 1, 0], [0, 1, 0]]))
    assert not is_eligible(torch.tensor([[1, 0], [0, 0]]))
    assert is_eligible(check_eligible(torch.tensor([[1, 0], [0, 1]])))


def _brute_force_classes(num_in, num_out, nnz):
    classes = set()
    for bits in range(2 ** (num_in * num_out)):
        m = torch.tensor([(bits >> i) & 1 for i in range(num_in * num_out)]).view(num_out, num_in)
        if int(m.sum()) == nnz and is_eligible(m):
            rows = [tuple(r.tolist()) for r in m]
            classes.add(min(tuple(rows[i] for i in p) for p in permutations(range(num_out))))
    return classes


@pytest.mark.parametrize("shape", [(2, 3), (3, 3), (3, 2)])
def test_enumeration_is_every_eligible_mask_once_per_row_permutation(shape):
    num_in, num_out = shape
    for nnz in range(1, num_in * num_out + 1):
        masks = eligible_masks(num_in, num_out, nnz)
        assert len(masks) == len(_brute_force_classes(num_in, num_out, nnz)) == count_eligible(num_in, num_out, nnz)
        canon = {min(tuple(tuple(r.tolist()) for r in m[list(p)]) for p in permutations(range(num_out)))
                 for m in masks}
        assert len(canon) == len(masks)  # no two are permutations of each other
        assert all(is_eligible(m) and int(m.sum()) == nnz for m in masks)


def test_dead_path_counter_on_hand_made_masks():
    w1 = torch.tensor([[1.0, 1], [0, 1], [0, 0]])  # unit 2 of layer 1 has no input
    w2 = torch.tensor([[1.0, 0, 1], [0, 1, 0]])  # layer-2 unit 0 reads units 0 and 2, unit 1 reads unit 1
    w3 = torch.tensor([[1.0, 0]])  # only layer-2 unit 0 reaches the output; unit 1 has no output
    out = {k: int(v[0]) for k, v in dead_path_counts([w1, w2, w3]).items()}
    # live: w1 (0,0),(0,1); w2 (0,0); w3 (0,0). Dead: w1 (1,1) feeds unit 1 -> layer-2 unit 1 -> nowhere;
    # w2 (0,2) comes from a unit with no input; w2 (1,1) goes nowhere
    assert out["nnz"] == 7 and out["effective_nnz"] == 4 and out["dead_weights"] == 3
    assert out["no_input_units"] == 1 and out["no_output_units"] == 2 and out["dead_units"] == 3


def test_a_clean_network_has_no_dead_paths_and_absent_units_are_not_dead():
    w1 = torch.tensor([[1.0, 1], [0, 0]])
    w2 = torch.tensor([[1.0, 0]])
    w3 = torch.tensor([[1.0]])
    out = {k: int(v[0]) for k, v in dead_path_counts([w1, w2, w3]).items()}
    assert out["dead_weights"] == 0 and out["dead_units"] == 0 and out["effective_nnz"] == 4


def test_dead_path_counter_rejects_masks_that_do_not_chain():
    with pytest.raises(ValueError, match="do not chain"):
        dead_path_counts([torch.ones(3, 2), torch.ones(2, 4)])
