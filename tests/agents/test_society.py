"""The small real society (Agent Smith, part B): albums, border attack, clean responses, determinism."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from icml24.agents.society import (
    SocietyTables,
    border_fraction,
    initial_albums,
    run_society,
    society_experiment,
    society_tables,
)
from icml24.agents.society_attack import ChatRecords, border_mask, craft_border_attack
from icml24.agents.society_models import (
    TinyCLIP,
    TinyResponder,
    init_weights,
    make_world,
    render,
    render_ood,
    train_clip,
    train_responder,
)

SMALL = dict(num_agents=16, rounds=5, attack_epochs=2, random_state=3, train_steps=30, bank_per_class=8,
             ensemble_agents=16, ensemble_rounds=4, size=32, border=1, borders=(2,), ood_probes=8)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    """Tiny models: one torch thread avoids oversubscription on shared cores (restored afterwards)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


KEYS = {"crafted_cumulative_final", "clean_cumulative_final", "alpha_q", "alpha_a", "beta", "crafted_rounds_to_90"}


def _random_tables(world, n_images: int, rng: np.random.Generator) -> SocietyTables:
    emb = rng.standard_normal((n_images, 8))
    plan = rng.standard_normal((world.num_roles, world.num_classes, 8))
    outs = rng.integers(0, world.num_outputs, (2, n_images, world.num_roles))
    return SocietyTables(emb, plan, outs[0], outs[1])


def test_album_never_exceeds_its_size_and_answerer_receives_the_image():
    rng = np.random.default_rng(0)
    world = make_world(rng, size=32)
    bank_classes = np.repeat(np.arange(world.num_classes), 4)
    tables = _random_tables(world, len(bank_classes) + 1, rng)
    roles = rng.integers(0, world.num_roles, 20)
    albums = initial_albums(world, roles, bank_classes, 10, rng)
    assert albums.shape == (20, 10)
    special = len(bank_classes)
    albums[0, -1] = special
    for _ in range(6):
        before = albums.copy()
        log = run_society(world, tables, roles, albums, special, 1, rng)
        assert albums.shape == (20, 10)
        q_roles, _, a_roles, image = log["records"].T
        changed = np.flatnonzero((albums != before).any(1))
        # only answerers' albums change, by a FIFO shift with the retrieved image appended
        for agent in changed:
            assert np.array_equal(albums[agent, :-1], before[agent, 1:])
            assert albums[agent, -1] in image
    assert log["records"].shape == (10, 4)


def test_initial_albums_hold_preferred_objects():
    rng = np.random.default_rng(1)
    world = make_world(rng)
    bank_classes = np.repeat(np.arange(world.num_classes), 5)
    roles = rng.integers(0, world.num_roles, 30)
    albums = initial_albums(world, roles, bank_classes, 10, rng)
    for agent in range(30):
        assert set(bank_classes[albums[agent]]) <= set(world.prefs[roles[agent]])


def test_attack_changes_only_the_border():
    rng = np.random.default_rng(2)
    gen = torch.Generator().manual_seed(2)
    world = make_world(rng, size=32)
    clip = train_clip(world, rng, steps=5, model=init_weights(TinyCLIP(world), gen))
    responder = train_responder(world, rng, steps=5, model=init_weights(TinyResponder(world), gen))
    n = 16
    q = rng.integers(0, world.num_roles, n)
    records = ChatRecords(q, world.prefs[q, 0], rng.integers(0, world.num_roles, n))
    image = render(world, [0], rng)
    adv, info = craft_border_attack(clip, responder, world, image, records, records, rng, epochs=3, border=2,
                                    validate_every=1)
    diff = (adv - image).abs()[0]
    inside = border_mask(world.size, 2)[0, 0] == 0
    assert float(diff[:, inside].max()) == 0.0
    assert float(diff[:, ~inside].max()) > 0.0
    assert 0.0 <= float(adv.min()) and float(adv.max()) <= 1.0
    assert set(info) >= {"val_jsr", "val_min_clip"}


def test_clean_images_never_yield_harmful():
    rng = np.random.default_rng(4)
    gen = torch.Generator().manual_seed(4)
    world = make_world(rng, size=32)
    clip = train_clip(world, rng, steps=50, model=init_weights(TinyCLIP(world), gen))
    responder = train_responder(world, rng, steps=200, model=init_weights(TinyResponder(world), gen))
    images = render(world, rng.integers(0, world.num_classes, 256), rng)
    tables = society_tables(world, clip, responder, images)
    assert not (tables.out_ask == world.harmful).any()
    assert not (tables.out_answer == world.harmful).any()


def test_same_seed_same_metrics_and_shapes():
    m1, c1 = society_experiment(**SMALL)
    m2, c2 = society_experiment(**SMALL)
    assert m1 == m2
    assert set(c1) == set(c2)
    for key in c1:
        np.testing.assert_array_equal(c1[key], c2[key])
    assert KEYS <= set(m1)
    assert all(np.isfinite(v) and isinstance(v, float) for v in m1.values())
    assert c1["crafted_cumulative"].shape == (SMALL["rounds"],)
    assert c1["clean_cumulative"].shape == (SMALL["rounds"],)


@pytest.mark.parametrize("bad", [dict(num_agents=1), dict(num_agents=7), dict(rounds=0), dict(border=16),
                                 dict(border=0), dict(borders=(20,)), dict(border=1.5), dict(size=30)])
def test_rejects_bad_arguments(bad):
    args = dict(SMALL, **bad)
    with pytest.raises(ValueError):
        society_experiment(**args)


def test_run_society_refuses_an_odd_number_of_agents():
    rng = np.random.default_rng(0)
    world = make_world(rng, size=32)
    tables = _random_tables(world, 9, rng)
    with pytest.raises(ValueError, match="even"):
        run_society(world, tables, np.zeros(5, int), np.zeros((5, 10), int), 8, 1, rng)


def test_border_fraction_matches_the_papers_budget_at_112_pixels():
    assert border_fraction(336, 6) == pytest.approx(0.0701, abs=1e-4)
    assert border_fraction(112, 2) == pytest.approx(border_fraction(336, 6))


def test_out_of_kind_images_differ_from_the_albums():
    rng = np.random.default_rng(5)
    world = make_world(rng, size=32)
    ood, album = render_ood(world, 4, rng), render(world, np.arange(4), rng)
    assert ood.shape == album.shape == (4, 3, 32, 32) and 0 <= float(ood.min()) and float(ood.max()) <= 1


def test_society_metrics_report_the_budget_curve_and_the_clean_control():
    metrics, _ = society_experiment(**SMALL)
    for b in (1, 2):
        assert {f"h{b}_cumulative_final", f"h{b}_beta", f"h{b}_border_fraction"} <= set(metrics)
    assert 0.0 <= metrics["clean_ood_harmful_rate"] <= 1.0 and metrics["image_size"] == 32.0


def test_an_int_random_state_reproduces_the_models_and_a_generator_continues_its_stream():
    world = make_world(0, size=32)
    assert np.array_equal(world.prefs, make_world(np.random.default_rng(0), size=32).prefs)
    weights = [train_clip(world, 7, steps=2).state_dict()["text_head.weight"] for _ in range(2)]
    assert torch.equal(*weights)
    assert not torch.equal(weights[0], train_clip(world, 8, steps=2).state_dict()["text_head.weight"])
    rng = np.random.default_rng(1)  # one generator: the second render continues the stream
    assert not torch.equal(render(world, [0, 1], rng), render(world, [0, 1], rng))
    assert torch.equal(render(world, [0, 1], 1), render(world, [0, 1], np.random.default_rng(1)))


def test_init_weights_from_one_torch_generator_continues_its_stream():
    world = make_world(0, size=32)
    gen = torch.Generator().manual_seed(0)
    first, second = init_weights(TinyCLIP(world), gen), init_weights(TinyCLIP(world), gen)
    again = init_weights(TinyCLIP(world), 0)
    assert torch.equal(first.text_head.weight, again.text_head.weight)
    assert not torch.equal(first.text_head.weight, second.text_head.weight)
