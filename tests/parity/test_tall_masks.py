"""tall-masks against the official nik-dim/tall_masks on fixed task vectors (tests/parity/tall-masks.json, recorded by
tools/parity/record_tall_masks.py, which builds its inputs with ``task_models`` below).

Two input sets of 8 tasks over three named tensors (inserted out of sorted order: the official code flattens in
sorted key order, ours in insertion order):

* ``grid``: every weight a multiple of 2^-12 below 2^-1, so every sum and difference either side forms is exact in
  float32; many exact zeros, equal magnitudes, columns where two tasks cancel, all-zero columns and a negative
  majority sign. TALL masks (TA and TIES multi-task vectors, each lambda), Consensus masks (k = 1, 2, 3) and the
  TA, TIES and Consensus vectors must equal the official ones bit for bit;
* ``float``: generic float32 weights with heavy-tailed task vectors: the TA and TIES vectors to per-entry tolerances
  from float32's conditioning of the sums, the TALL and Consensus masks exactly wherever float32 rounding cannot
  decide the comparison (the fixture's ``tolerance_derivation``).

Deliberate deviations (fixture ``ours``/``deviation``): the official top-20% trim keeps int(0.2 P) + 1 entries per
task, ours round(0.2 P); where no sign has the majority the official code merges the negative entries of a zero sum,
ours the positive ones. The TIES-based cases call ours with the official keep count, so they test everything else.
"""

from __future__ import annotations

import hashlib
from functools import cache

import numpy as np
import pytest
import torch
from parity_fixture import assert_close, case, load_fixture

from icml24.merging import (
    ConsensusMerging,
    StateDictLayout,
    TALLMasks,
    compute_tall_masks,
    compute_task_vectors,
    consensus_mask,
    task_arithmetic_vector,
    ties_vector,
    trim_top_k,
)

NUM_TASKS, UNIT, U = 8, 2.0 ** -12, 2.0 ** -24
SEEDS = {"grid": 0, "float": 1}
LAYOUTS = {  # insertion order differs from sorted order on purpose
    "grid": (("visual.proj", (20, 40)), ("visual.ln.bias", (40,)), ("text.embed", (10, 40))),
    "float": (("visual.proj", (16, 40)), ("visual.ln.bias", (40,)), ("text.embed", (8, 40))),
}
FLOAT_SCALES = {"visual.proj": 1e-3, "visual.ln.bias": 1e-2, "text.embed": 3e-4}
LAMBDAS = (0.2, 0.3, 0.4, 0.5, 0.6)
TASK_LAMBDAS = tuple(LAMBDAS[t % len(LAMBDAS)] for t in range(NUM_TASKS))  # lambda_t "chosen on validation"
CONSENSUS_K = (1, 2, 3)


def task_models(kind: str) -> tuple[dict[str, torch.Tensor], list[dict[str, torch.Tensor]]]:
    """``(theta_0, [theta_1..theta_8])`` as float32 state dicts, from ``numpy.random.default_rng(SEEDS[kind])``."""
    rng = np.random.default_rng(SEEDS[kind])
    layout = LAYOUTS[kind]
    num_params = sum(int(np.prod(shape)) for _, shape in layout)
    if kind == "grid":
        base = rng.integers(-1024, 1025, num_params)
        magnitude = np.minimum(rng.geometric(0.25, (NUM_TASKS, num_params)), 64)  # many equal magnitudes
        tau = magnitude * np.where(rng.random((NUM_TASKS, num_params)) < 0.6, -1, 1)  # a negative majority sign
        tau[rng.random((NUM_TASKS, num_params)) < 0.3] = 0
        columns = rng.permutation(num_params)
        cancel, silent = columns[:num_params // 20], columns[num_params // 20:num_params // 10]
        tau[:, cancel] = 0
        tau[0, cancel] = rng.integers(1, 65, len(cancel))
        tau[1, cancel] = -tau[0, cancel]  # a zero sum with nonzero entries: the majority sign decides TIES there
        tau[:, silent] = 0  # weights no task moves
        theta0, thetas = (base * UNIT).astype(np.float32), ((base + tau) * UNIT).astype(np.float32)
    else:
        theta0 = rng.normal(0.0, 0.05, num_params).astype(np.float32)
        scale = np.concatenate([np.full(int(np.prod(shape)), FLOAT_SCALES[name]) for name, shape in layout])
        tau = rng.normal(size=(NUM_TASKS, num_params)) * np.exp(rng.normal(size=(NUM_TASKS, num_params))) * scale
        tau[rng.random((NUM_TASKS, num_params)) < 0.1] = 0
        tau[:, rng.permutation(num_params)[:num_params // 50]] = 0
        thetas = (theta0 + tau).astype(np.float32)
    return _state_dict(theta0, layout), [_state_dict(row, layout) for row in thetas]


def _state_dict(flat: np.ndarray, layout) -> dict[str, torch.Tensor]:
    out, start = {}, 0
    for name, shape in layout:
        size = int(np.prod(shape))
        out[name] = torch.from_numpy(flat[start:start + size].copy()).reshape(shape)
        start += size
    return out


def inputs_digest(kind: str) -> str:
    """sha256 of the float32 bytes of theta_0 then each theta_t, tensors in insertion order."""
    theta0, thetas = task_models(kind)
    digest = hashlib.sha256()
    for model in (theta0, *thetas):
        for name, _ in LAYOUTS[kind]:
            digest.update(model[name].numpy().tobytes())
    return digest.hexdigest()


def official_density(num_params: int) -> float:
    """The density at which ours keeps what the official top-20% trim keeps: int(0.2 P) + 1 entries per task."""
    return (int(num_params * 0.2) + 1) / num_params


def gamma(n: int) -> float:
    return n * U / (1 - n * U)


def unpack(hexes: str, shape) -> np.ndarray:
    """A mask stored as ``np.packbits`` of its C-order bits, in hex."""
    bits = np.unpackbits(np.frombuffer(bytes.fromhex(hexes), np.uint8))
    return bits[:int(np.prod(shape))].reshape(shape).astype(bool)


def float32_values(values) -> np.ndarray:
    """Stored float32 numbers (9 significant digits) back to their exact float32 values, as float64."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


@cache
def _fixture():
    return load_fixture("tall-masks")


@cache
def _setting(kind: str):
    """The state dicts, our task vectors ``[T, P]`` and our flat layout (insertion order)."""
    theta0, thetas = task_models(kind)
    return theta0, thetas, compute_task_vectors(theta0, thetas), StateDictLayout.from_state_dict(theta0)


def per_tensor(flat: torch.Tensor, kind: str) -> dict[str, np.ndarray]:
    """Our flat ``[..., P]`` (insertion order) split into the named tensors, flattened as the fixture stores them."""
    out, start, layout = {}, 0, _setting(kind)[3]
    for name, size in zip(layout.keys, layout.numels):
        out[name] = flat[..., start:start + size].numpy()
        start += size
    return out


def _masks(entry: dict, kind: str, key) -> dict[str, np.ndarray]:
    shapes = dict(LAYOUTS[kind])
    stored = entry["values"][key]
    lead = () if entry["name"].startswith("consensus") else (NUM_TASKS,)
    return {name: unpack(stored[name], lead + (int(np.prod(shapes[name])),)) for name in shapes}


def _our_multitask(kind: str, base: str) -> torch.Tensor:
    tau = _setting(kind)[2]
    if base == "ta":
        return task_arithmetic_vector(tau)
    return ties_vector(tau, official_density(tau.shape[1]), "sum")


def _float_band(lam: np.ndarray) -> np.ndarray:
    """Per (task, weight) of the float set: where float32 rounding may decide ``|tau_t| > lambda |tau_MTL - tau_t|``
    (the fixture's derivation: the official distance is |theta_0 + tau_MTL - theta_t| in float32, ours
    |tau_MTL - tau_t|, each within E of the exact one; then one float32 multiply by float32(lambda))."""
    theta0, _, tau, layout = _setting("float")
    t = tau.double().numpy()
    exact = t.sum(0)
    distance = np.abs(exact - t)
    size = np.abs(t).sum(0)
    rounded_sum = np.minimum(2 * U * (np.abs(layout.flatten(theta0).double().numpy()) + size), 2 * size)
    error = 2 * gamma(NUM_TASKS + 2) * (size + distance) + rounded_sum
    lam32 = np.asarray(lam, np.float32).astype(np.float64).reshape(-1, 1)
    bound = lam32 * (error * (1 + U) + U * distance)
    return (np.abs(np.abs(t) - lam32 * distance) <= bound) & (bound > 0)  # bound 0: all exact (a zero column)


def test_inputs_are_the_recorded_ones():
    for entry in _fixture()["cases"]:
        for recorded in ([entry["inputs"]] if "set" in entry["inputs"] else entry["inputs"].get("sets", {}).values()):
            assert inputs_digest(recorded["set"]) == recorded["sha256"], f"{entry['name']}: inputs changed"


@pytest.mark.parametrize("base", ["ta", "ties"])
def test_tall_masks_equal_the_official_bit_for_bit(base):
    entry = case(_fixture(), f"tall_masks_{base}_grid")
    theta0, thetas, tau, _ = _setting("grid")
    density = official_density(tau.shape[1])
    for lam in LAMBDAS:
        official = _masks(entry, "grid", str(lam))
        ours = per_tensor(TALLMasks(lambdas=[lam], multitask=base, density=density).fit(theta0, thetas).masks_, "grid")
        for name in official:
            assert np.array_equal(ours[name], official[name]), f"{base} lambda={lam} {name}: masks differ"
    ties = entry["values"]["exact_ties"]
    assert all(ties[str(lam)] > 0 for lam in LAMBDAS), "the grid must hold exact ties |tau| == lambda d at every lambda"


def test_tall_masks_equal_the_official_where_float32_decides_them():
    entry = case(_fixture(), "tall_masks_ta_float")
    _, _, tau, _ = _setting("float")
    multitask = task_arithmetic_vector(tau)
    for lam in LAMBDAS:
        official = _masks(entry, "float", str(lam))
        ours = per_tensor(compute_tall_masks(tau, multitask, lam), "float")
        band = per_tensor(torch.from_numpy(_float_band(np.full(NUM_TASKS, lam))), "float")
        for name in official:
            decided = ~band[name]
            assert decided.mean() > 0.999, f"lambda={lam} {name}: the rounding band holds too much to test"
            assert np.array_equal(ours[name][decided], official[name][decided]), f"lambda={lam} {name}: masks differ"


@pytest.mark.parametrize("base", ["ta", "ties"])
def test_consensus_masks_equal_the_official(base):
    entry = case(_fixture(), f"consensus_masks_{base}_grid")
    _, _, tau, _ = _setting("grid")
    masks = compute_tall_masks(tau, _our_multitask("grid", base), torch.tensor(TASK_LAMBDAS))
    for k in CONSENSUS_K:
        ours = per_tensor(consensus_mask(masks, k), "grid")
        official = _masks(entry, "grid", str(k))
        for name in official:
            assert np.array_equal(ours[name], official[name]), f"{base} k={k} {name}: consensus masks differ"


def test_consensus_mask_equals_the_official_where_float32_decides_it():
    float_entry = case(_fixture(), "consensus_masks_ta_float")
    _, _, tau, _ = _setting("float")
    ours = per_tensor(consensus_mask(compute_tall_masks(tau, task_arithmetic_vector(tau), torch.tensor(TASK_LAMBDAS)),
                                     2), "float")
    undecided = per_tensor(torch.from_numpy(_float_band(np.array(TASK_LAMBDAS)).any(0)), "float")
    for name, official in _masks(float_entry, "float", "2").items():
        decided = ~undecided[name]
        assert np.array_equal(ours[name][decided], official[decided]), f"float k=2 {name}: consensus differs"


def _vector_case(name: str, kind: str, ours: torch.Tensor) -> float:
    entry = case(_fixture(), name)
    ours_split = per_tensor(ours.double(), kind)
    gap = 0.0
    for tensor, official in entry["values"].items():
        tolerance = entry["tolerance"][tensor] if isinstance(entry["tolerance"], dict) else entry["tolerance"]
        gap = max(gap, assert_close(ours_split[tensor], float32_values(official), tolerance, f"{name} {tensor}"))
    return gap


@pytest.mark.parametrize("kind", ["grid", "float"])
def test_task_arithmetic_vector_equals_the_official(kind):
    _vector_case(f"task_arithmetic_{kind}", kind, task_arithmetic_vector(_setting(kind)[2]))


@pytest.mark.parametrize("kind", ["grid", "float"])
@pytest.mark.parametrize("aggregation", ["mean", "sum"])
def test_ties_vector_equals_the_official_at_the_official_keep_count(kind, aggregation):
    tau = _setting(kind)[2]
    _vector_case(f"ties_{aggregation}_{kind}", kind, ties_vector(tau, official_density(tau.shape[1]), aggregation))
    if kind == "float":  # the tolerance assumes every elected sign is decided by float32 (its derivation)
        trimmed = trim_top_k(tau, official_density(tau.shape[1])).double()
        magnitude = trimmed.abs().sum(0)
        assert ((magnitude == 0) | (trimmed.sum(0).abs() > 2 * gamma(NUM_TASKS) * magnitude)).all()


@pytest.mark.parametrize("base", ["ta", "ties"])
def test_consensus_merged_vector_equals_the_official(base):
    theta0, thetas, tau, _ = _setting("grid")
    masks = compute_tall_masks(tau, _our_multitask("grid", base), torch.tensor(TASK_LAMBDAS))
    merge = ConsensusMerging(k=2, multitask=base, density=official_density(tau.shape[1])).fit(theta0, thetas, masks)
    _vector_case(f"consensus_{base}_grid", "grid", merge.multitask_vector_)


def test_ours_trims_exactly_20_percent_where_the_official_keeps_one_entry_more():
    entry = case(_fixture(), "ties_trim_counts")
    for kind in SEEDS:
        tau = _setting(kind)[2]
        ours = (trim_top_k(tau, 0.2) != 0).sum(1).tolist()
        assert ours == entry["ours"][kind]
        official = entry["values"][kind]
        assert official == (trim_top_k(tau, official_density(tau.shape[1])) != 0).sum(1).tolist()
        assert all(o >= int(0.2 * tau.shape[1]) + 1 for o in official) and all(o <= m for o, m in zip(ours, official))
        # the gap to the official TIES vector: only where some task's extra entry (kept by the official trim alone) is
        extra = ((trim_top_k(tau, official_density(tau.shape[1])) != 0) & (trim_top_k(tau, 0.2) == 0)).any(0)
        moved = per_tensor(torch.from_numpy(extra.numpy()), kind)
        ours_vector = per_tensor(ties_vector(tau, 0.2, "mean").double(), kind)
        tie_case = case(_fixture(), f"ties_mean_{kind}")
        tolerance = tie_case["tolerance"]
        for name, official_vector in tie_case["values"].items():
            keep = ~moved[name]
            bound = np.asarray(tolerance[name])[keep] if isinstance(tolerance, dict) else tolerance
            assert_close(ours_vector[name][keep], float32_values(official_vector)[keep], bound, f"{kind} {name}")


def test_a_sign_tie_merges_the_positive_entries_where_the_official_merges_the_negative():
    entry = case(_fixture(), "ties_zero_majority")
    tau = torch.tensor(entry["inputs"]["task_vectors"], dtype=torch.float32)
    for aggregation in ("mean", "sum"):
        ours = ties_vector(tau, 1.0, aggregation)
        assert_close(ours, entry["ours"][aggregation], 0.0, f"ours, {aggregation}")
        official = np.asarray(entry["values"][aggregation])
        tied = (tau.sum(0) == 0).numpy()
        assert_close(ours.numpy()[~tied], official[~tied], 0.0, f"official outside the sign ties, {aggregation}")
        assert (ours.numpy()[tied] > 0).all() and (official[tied] < 0).all()


# planted bugs: each must lie outside the fixture's tolerances (a tolerance no bug can exceed would be a defect)
def _mutant_masks(tau: torch.Tensor, multitask: torch.Tensor, lam: float, bug: str) -> torch.Tensor:
    distance = (multitask - tau).abs()
    if bug == ">=":
        return tau.abs() >= lam * distance
    if bug == "lambda on the wrong side":
        return lam * tau.abs() > distance
    return tau.abs() > lam * multitask.abs()  # "tau_MTL for tau_MTL - tau_t"


@pytest.mark.parametrize("bug", [">=", "lambda on the wrong side", "tau_MTL for tau_MTL - tau_t"])
def test_a_planted_tall_mask_bug_fails(bug):
    entry = case(_fixture(), "tall_masks_ta_grid")
    tau = _setting("grid")[2]
    multitask = task_arithmetic_vector(tau)
    differs = [any(not np.array_equal(ours, official) for ours, official in zip(
        per_tensor(_mutant_masks(tau, multitask, lam, bug), "grid").values(), _masks(entry, "grid", str(lam)).values()))
        for lam in LAMBDAS]
    assert all(differs) if bug == ">=" else any(differs), f"{bug}: the masks still equal the official ones"


@pytest.mark.parametrize("bug", ["float16 sum", "one task dropped", "sign elected before trimming"])
def test_a_planted_merge_bug_fails(bug):
    tau = _setting("float")[2]
    with pytest.raises(AssertionError):
        if bug == "float16 sum":
            _vector_case("task_arithmetic_float", "float", tau.half().sum(0).float())
        elif bug == "one task dropped":
            _vector_case("task_arithmetic_float", "float", tau[1:].sum(0))
        else:
            trimmed = trim_top_k(tau, official_density(tau.shape[1]))
            agrees = torch.where(tau.sum(0) >= 0, trimmed > 0, trimmed < 0)
            _vector_case("ties_sum_float", "float", (trimmed * agrees).sum(0))
