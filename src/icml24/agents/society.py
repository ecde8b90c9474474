"""A small real society of multimodal agents (Agent Smith, reproduction part B).

Agents have a role and a FIFO album of images. Each round the agents are randomly paired (questioner, answerer); the
questioner writes a plan 'SELECT <role> <object>', retrieves the album image with the highest cosine similarity to
the plan under a tiny CLIP, asks about it, the answerer answers given the image, and the image is pushed into the
ANSWERER's album. An agent is infected in a round when the chat's image is V_adv and its output is HARMFUL. All N/2
chats of a round go through the models at once (the models are frozen, so per-image outputs are tabulated).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .._random import RandomState, check_random_state, spawn, torch_generator
from .._validation import check_positive
from .society_attack import ChatRecords, craft_border_attack
from .society_models import (
    TinyCLIP,
    TinyResponder,
    World,
    init_weights,
    make_world,
    plan_tokens,
    prompt_tokens,
    render,
    render_ood,
    train_clip,
    train_responder,
)

__all__ = ["SocietyTables", "society_tables", "initial_albums", "run_society", "society_experiment", "border_fraction"]


@dataclass(frozen=True)
class SocietyTables:
    """Frozen-model lookups: image embeddings (n, d), plan embeddings (R, K, d), outputs under ASK/ANSWER (n, R)."""

    image_emb: np.ndarray
    plan_emb: np.ndarray
    out_ask: np.ndarray
    out_answer: np.ndarray


def society_tables(world: World, clip: TinyCLIP, responder: TinyResponder, images: torch.Tensor) -> SocietyTables:
    """Run every (image, role) through the frozen models once, batched (each image encoded once)."""
    r, k = world.num_roles, world.num_classes
    roles = np.repeat(np.arange(r), k)
    with torch.no_grad():
        plan = clip.encode_text(plan_tokens(world, roles, np.tile(np.arange(k), r))).reshape(r, k, -1)
        emb = torch.cat([clip.encode_image(chunk) for chunk in images.split(256)])
        out_ask = torch.cat([responder.respond(chunk, prompt_tokens(world, np.arange(r), "ask")).argmax(-1)
                             for chunk in images.split(256)])
        out_answer = torch.cat([responder.respond(chunk, prompt_tokens(world, np.arange(r), "answer")).argmax(-1)
                                for chunk in images.split(256)])
    return SocietyTables(emb.numpy(), plan.numpy(), out_ask.numpy(), out_answer.numpy())


def initial_albums(world: World, roles: np.ndarray, bank_classes: np.ndarray, album_size: int,
                   random_state: RandomState = None) -> np.ndarray:
    """(N, album_size) bank indices: each slot an image of one of the agent's preferred objects."""
    rng = check_random_state(random_state)
    by_class = [np.flatnonzero(bank_classes == c) for c in range(world.num_classes)]
    cls = world.prefs[roles[:, None], rng.integers(0, world.prefs.shape[1], (len(roles), album_size))]
    pick = rng.random(cls.shape)
    sizes = np.array([len(b) for b in by_class])
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    flat = np.concatenate(by_class)
    return flat[offsets[cls] + (pick * sizes[cls]).astype(int)]


def run_society(world: World, tables: SocietyTables, roles: np.ndarray, albums: np.ndarray, special: int, rounds: int,
                random_state: RandomState = None) -> dict[str, np.ndarray]:
    """Chat ``rounds`` rounds; ``albums`` is updated in place (FIFO). Returns per-round curves and rates.
    ``random_state`` (None, an int or a numpy Generator) draws the pairings and the plans.

    Rates (App. E.4) are over the chats whose questioner carries ``special`` at the start of the round:
    beta = retrieval of it, alpha_q / alpha_a = retrieval x HARMFUL question / answer (NaN when no carrier questions).
    """
    n = len(roles)
    if n < 2 or n % 2:
        raise ValueError(f"the society needs an even number of agents >= 2 (pair-wise chat), got {n}")
    rng = check_random_state(random_state)
    half = n // 2
    ever = np.zeros(n, bool)
    out = {k: np.full(rounds, np.nan) for k in ("cumulative", "current", "carriers", "beta", "alpha_q", "alpha_a")}
    records = []
    for t in range(rounds):
        perm = rng.permutation(n)
        q, a = perm[:half], perm[half:]
        carrier_q = (albums[q] == special).any(1)
        plan_cls = world.prefs[roles[q], rng.integers(0, world.prefs.shape[1], half)]
        sims = np.einsum("pd,pkd->pk", tables.plan_emb[roles[q], plan_cls], tables.image_emb[albums[q]])
        image = albums[q, sims.argmax(1)]
        got = image == special
        bad_q = got & (tables.out_ask[image, roles[q]] == world.harmful)
        bad_a = got & (tables.out_answer[image, roles[a]] == world.harmful)
        current = np.zeros(n, bool)
        current[q], current[a] = bad_q, bad_a
        ever |= current
        albums[a] = np.concatenate([albums[a, 1:], image[:, None]], axis=1)
        out["cumulative"][t], out["current"][t] = ever.mean(), current.mean()
        out["carriers"][t] = (albums == special).any(1).mean()
        if carrier_q.any():
            out["beta"][t] = got[carrier_q].mean()
            out["alpha_q"][t], out["alpha_a"][t] = bad_q[carrier_q].mean(), bad_a[carrier_q].mean()
        records.append(np.stack([roles[q], plan_cls, roles[a], image], 1))
    out["records"] = np.concatenate(records)
    return out


def _first_round(curve: np.ndarray, level: float) -> float:
    hit = np.flatnonzero(curve >= level)
    return float(hit[0] + 1) if len(hit) else float(len(curve) + 1)


def _mean(x: np.ndarray) -> float:
    return float(np.nanmean(x)) if np.isfinite(x).any() else 0.0


def border_fraction(size: int, border: int) -> float:
    """Share of an S x S image's pixels in its h-pixel frame: 1 - (S - 2h)^2 / S^2 (paper: h = 6 on 336 px, 7%)."""
    return float(1 - max(size - 2 * border, 0) ** 2 / size**2)


def _spread_metrics(run: dict[str, np.ndarray], prefix: str) -> dict[str, float]:
    return {f"{prefix}_cumulative_final": float(run["cumulative"][-1]),
            f"{prefix}_current_final": float(run["current"][-1]),
            f"{prefix}_carriers_final": float(run["carriers"][-1]),
            f"{prefix}_rounds_to_90": _first_round(run["cumulative"], 0.9),
            f"{prefix}_alpha_q": _mean(run["alpha_q"]), f"{prefix}_alpha_a": _mean(run["alpha_a"]),
            f"{prefix}_beta": _mean(run["beta"])}


def society_experiment(num_agents: int = 128, rounds: int = 32, attack_epochs: int = 100,
                       random_state: RandomState = None, *,
                       album_size: int = 10, border: int = 2, borders: tuple[int, ...] = (), size: int = 112,
                       bank_per_class: int = 64, train_steps: int = 300, ensemble_agents: int = 64,
                       ensemble_rounds: int = 8, craft: bool = True, ood_probes: int = 64,
                       ) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Train the society, craft V_adv on benign chat records, and spread it from one agent (vs the clean image).

    V_adv starts from an image of another kind than the albums' (``render_ood``; the paper starts from an ArtBench
    painting), and the clean control is that starting image unoptimized, spread through the same chats (common
    random numbers). ``craft=False`` puts the clean image in V_adv's slot too (zero attack epochs; same world,
    models, population and streams); the keys stay ``crafted_*``. ``border`` is the attack frame in pixels (2 on
    112 px is the paper's h = 6 on 336 px, 7% of the pixels); each of ``borders`` is crafted and spread as well,
    reported as ``h<b>_*`` (the budget curve).

    Returns metrics (``crafted_cumulative_final``, ``clean_cumulative_final``, ``alpha_q``, ``alpha_a``, ``beta``,
    ``crafted_rounds_to_90``, ``clean_ood_harmful_rate`` (the responder's HARMFUL rate on ``ood_probes`` unoptimized
    out-of-kind images, any role and prompt) and regime quantities) and curves (``crafted_cumulative``,
    ``clean_cumulative``, ``crafted_current``, ``crafted_carriers``, ``clean_carriers``), each of length ``rounds``.

    ``random_state`` (an int, None or a numpy Generator) is split into independent streams (``spawn``) for the
    models, the world, the images, the benign ensemble, the attack, the population and the chats.

    Scale (deviations from the paper, for speed): 3 x 112 x 112 images; the benign ensemble is ``ensemble_agents``
    x ``ensemble_rounds`` = 64 x 8 = 512 records (paper 64 x 32 = 1024), half to craft, half to validate.
    """
    for name, value in (("num_agents", num_agents), ("rounds", rounds), ("attack_epochs", attack_epochs),
                        ("album_size", album_size), ("ood_probes", ood_probes)):
        check_positive(name, value)
    if int(num_agents) != num_agents or num_agents < 2 or num_agents % 2:
        raise ValueError(f"num_agents must be an even integer >= 2 (pair-wise chat), got {num_agents!r}")
    frames = sorted({int(border), *[int(b) for b in borders]})
    for b in [border, *borders]:
        if int(b) != b or b < 1 or 2 * b >= size:
            raise ValueError(f"border must be an integer frame width in [1, {(size - 1) // 2}] pixels for a "
                             f"{size} px image (it must leave an interior), got {b!r}")
    streams = spawn(random_state, 8)
    init = torch_generator(int(streams[0].integers(2**31)))  # one torch stream initialises both models, in turn
    world = make_world(streams[1], size=size)
    clip = train_clip(world, streams[2], steps=train_steps, model=init_weights(TinyCLIP(world), init))
    responder = train_responder(world, streams[2], steps=train_steps, model=init_weights(TinyResponder(world), init))

    bank_classes = np.repeat(np.arange(world.num_classes), bank_per_class)
    bank = render(world, bank_classes, streams[3])
    start = render_ood(world, 1, streams[3])  # the attack's starting image, also the clean control
    base = len(bank_classes)  # index of the clean image; base + 1 + i: V_adv crafted with frames[i]

    # Benign ensemble run (paper: 64 agents x 32 rounds); text records split half to craft, half to validate.
    benign = society_tables(world, clip, responder, bank)
    e_roles = streams[4].integers(0, world.num_roles, ensemble_agents)
    e_albums = initial_albums(world, e_roles, bank_classes, album_size, streams[4])
    log = run_society(world, benign, e_roles, e_albums, -1, ensemble_rounds, streams[4])
    rec = log["records"]
    retrieval_acc = float((bank_classes[rec[:, 3]] == rec[:, 1]).mean())
    clean_harmful = float(max((benign.out_ask == world.harmful).mean(), (benign.out_answer == world.harmful).mean()))
    probes = society_tables(world, clip, responder, render_ood(world, ood_probes, streams[3]))
    ood_harmful = float(((probes.out_ask == world.harmful) | (probes.out_answer == world.harmful)).any(1).mean())
    records = ChatRecords(rec[:, 0], rec[:, 1], rec[:, 2])
    split = streams[5].permutation(len(records))
    half = len(split) // 2
    crafted, infos = [], []
    for b in frames:
        adv, info = craft_border_attack(clip, responder, world, start, records.subset(split[:half]),
                                        records.subset(split[half:]), int(streams[5].integers(2**63)),
                                        epochs=attack_epochs if craft else 0, border=b)
        crafted.append(adv)
        infos.append(info)
    tables = society_tables(world, clip, responder, torch.cat([bank, start, *crafted]))

    roles = streams[6].integers(0, world.num_roles, num_agents)
    albums0 = initial_albums(world, roles, bank_classes, album_size, streams[6])
    chat_seed = int(streams[7].integers(2**63))

    def spread(special: int) -> dict[str, np.ndarray]:
        albums = albums0.copy()
        albums[0, -1] = special  # V_adv is the newest image of one agent's album
        return run_society(world, tables, roles, albums, special, rounds, chat_seed)  # the same chats for each

    clean = spread(base)
    metrics: dict[str, float] = {}
    for i, b in enumerate(frames):
        run = spread(base + 1 + i)
        metrics.update(_spread_metrics(run, f"h{b}"))
        metrics[f"h{b}_border_fraction"] = border_fraction(size, b)
        metrics[f"h{b}_attack_val_jsr"] = infos[i]["val_jsr"]
        if b == border:
            main, info = run, infos[i]
    metrics.update(_spread_metrics(main, "crafted"))
    metrics.update(_spread_metrics(clean, "clean"))
    metrics.update({
        "alpha_q": metrics["crafted_alpha_q"], "alpha_a": metrics["crafted_alpha_a"], "beta": metrics["crafted_beta"],
        "clip_retrieval_accuracy": retrieval_acc,
        "clean_harmful_rate": clean_harmful,
        "clean_ood_harmful_rate": ood_harmful,
        "attack_val_jsr": info["val_jsr"],
        "attack_val_min_clip": info["val_min_clip"],
        "attack_max_pixel_change": info["max_pixel_change"],
        "attack_border": float(border),
        "attack_records": float(len(records)),
        "image_size": float(size),
        "border_fraction": border_fraction(size, border),
        "initial_carrier_ratio": 1.0 / num_agents,
    })
    curves = {"crafted_cumulative": main["cumulative"], "crafted_current": main["current"],
              "crafted_carriers": main["carriers"], "clean_cumulative": clean["cumulative"],
              "clean_carriers": clean["carriers"]}
    return metrics, curves
