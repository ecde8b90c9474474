"""Re-record tests/parity/agent-smith.json from a local copy of sail-sg/Agent-Smith (``$ICML24_PEERS/Agent-Smith``).

The official round loop is ``main()`` of ``simulation/simulation_test_batch.py`` (pairing by ``pop_random``, plan,
CLIP retrieval, question, answer, the chat's image pushed into the answerer's album) and the infection ratios are the
notebook's ``get_current_cumulative`` (``Analyze.ipynb``, cell 3: an agent is infected in a round when its output in
that round's chat equals the target). Both run unchanged. Only the models are replaced, by draws at fixed rates:

- LLaVA's plan for chat k of round r says "retrieve" with probability ``beta`` (the draw ``retrieve[r][k]``);
- CLIP's text/image features make that plan's cosine similarity highest on V_adv when it is in the album, and on a
  benign image otherwise (ties go to the album's first image, as ``np.argmax`` does);
- LLaVA's question (answer) is the target string when the chat's image is V_adv and the draw ``jailbreak_q[r][k]``
  (``jailbreak_a[r][k]``) holds, probability ``jailbreak``; otherwise a benign sentence.

The draws come from ``numpy.random.default_rng(draw_seed)``; the pairing from the official code's own
``random.seed(seed)``. The fixture records, per round, the official pairs (agent indices in chat order), the draws,
the carriers at the start of each round (V_adv in the album; counted by a bookkeeping hook on the official
``Agent.__init__`` and ``accelerator.wait_for_everyone``, called once a round) and the notebook's current /
cumulative ratios and per-round rates (beta_t, alpha^Q_t, alpha^A_t). ``accelerate``, ``transformers``,
``unidecode`` and ``PIL.Image.open`` are stubbed (one process, no weights; images are their paths); nothing else
of the official code is changed.

    ICML24_PEERS=/path/to/peers python tools/parity/record_agent_smith.py
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _record import commit_of, official_copy, write_fixture  # noqa: E402

ATTACK = "./data/attack_image/group1_index2/high_border6_group1_index2.png"
RETRIEVE, SKIP, BENIGN = "I select the special image.", "I select a benign image.", "A benign sentence."


class _Batch(dict):
    """What a Hugging Face processor returns: a dict with attribute access and ``.to``."""

    def __getattr__(self, name):
        return self[name]

    def to(self, *args, **kwargs):
        return self


class _Items(list):
    """A list the official loop can move to a device like a tensor (``inputs[key].to(device)``)."""

    def to(self, *args, **kwargs):
        return self


class Draws:
    """The models' random decisions, by (round, chat): consumed in the official code's order of chats."""

    def __init__(self, num_chats: int, rounds: int, beta: float, jailbreak: float, draw_seed: int):
        rng = np.random.default_rng(draw_seed)
        self.retrieve = rng.random((rounds, num_chats)) < beta
        self.jailbreak_q = rng.random((rounds, num_chats)) < jailbreak
        self.jailbreak_a = rng.random((rounds, num_chats)) < jailbreak
        self.num_chats = num_chats
        self.counters = {"plan": 0, "question": 0, "answer": 0}
        self.harmful = ""

    def next(self, kind: str) -> tuple[int, int]:
        c = self.counters[kind]
        self.counters[kind] = c + 1
        return divmod(c, self.num_chats)


def _stub_models(draws: Draws) -> None:
    """Install the stand-ins for accelerate / transformers / unidecode / PIL.Image.open (see module docstring)."""

    class Accelerator:
        device = "cpu"
        is_main_process = True

        def wait_for_everyone(self):  # called once a round, after the pairing, before the chats
            CARRIERS.append(sum(ATTACK in agent.album for agent in AGENTS))

        @contextlib.contextmanager
        def split_between_processes(self, items, apply_padding=False):
            yield items

    class Processor:
        """LLaVA's processor: keeps the prompts and images, so the stand-in model can see them."""

        tokenizer = None

        def __call__(self, prompts, images=None, return_tensors=None, padding=None):
            return _Batch(input_ids=torch.zeros(len(prompts), 1, dtype=torch.long), prompts=_Items(prompts),
                          images=_Items(images if images is not None else [None] * len(prompts)))

        def batch_decode(self, outputs, skip_special_tokens=True):
            return [_DECODE[int(o[0])] for o in outputs]

    class LLaVA:
        def eval(self):
            return self

        def generate(self, input_ids, prompts, images, max_new_tokens, do_sample):
            out = []
            for prompt, image in zip(prompts, images):
                if image is None:  # step one: the plan
                    r, k = draws.next("plan")
                    out.append(_ENCODE[RETRIEVE if draws.retrieve[r, k] else SKIP])
                    continue
                kind = "question" if "Please ask a question about the image." in prompt else "answer"
                r, k = draws.next(kind)
                hit = image == ATTACK and (draws.jailbreak_q if kind == "question" else draws.jailbreak_a)[r, k]
                out.append(_ENCODE[draws.harmful] if hit else _ENCODE[BENIGN])
            return torch.cat([input_ids, torch.tensor(out).reshape(-1, 1)], 1)

    class Tokenizer:
        def __call__(self, texts, **kwargs):
            ids = torch.tensor([[1 if t == RETRIEVE else 0] for t in texts])
            return _Batch(input_ids=ids, attention_mask=torch.ones_like(ids))

    class ImageProcessor:
        def preprocess(self, images, return_tensors=None):
            return _Batch(pixel_values=torch.tensor([[1.0 if i == ATTACK else 0.0] for i in images]))

    class CLIPProcessor:
        tokenizer = Tokenizer()
        image_processor = ImageProcessor()

    class CLIP:
        def eval(self):
            return self

        def get_text_features(self, input_ids, attention_mask):
            wants = input_ids[:, :1].float()  # "retrieve" plans point at V_adv, the others at the benign images
            return torch.cat([wants, 1 - wants], 1)

        def get_image_features(self, pixel_values):
            special = pixel_values[:, :1]
            return torch.cat([special, 0.5 * (1 - special)], 1)

    def loader(obj):
        return types.SimpleNamespace(from_pretrained=lambda *a, **k: obj)

    transformers = types.ModuleType("transformers")
    transformers.AutoProcessor = loader(Processor())
    transformers.LlavaForConditionalGeneration = loader(LLaVA())
    transformers.CLIPProcessor = loader(CLIPProcessor())
    transformers.CLIPModel = loader(CLIP())
    transformers.AutoModelForCausalLM = transformers.AutoTokenizer = loader(None)
    accelerate = types.ModuleType("accelerate")
    accelerate.Accelerator = Accelerator
    accelerate.utils = types.ModuleType("accelerate.utils")
    accelerate.utils.gather_object = lambda x: x
    sys.modules.update({"transformers": transformers, "accelerate": accelerate, "accelerate.utils": accelerate.utils,
                        "unidecode": types.SimpleNamespace(unidecode=lambda s: s)})
    import PIL.Image

    PIL.Image.open = lambda path: path  # images are their paths: nothing is read


_DECODE = [RETRIEVE, SKIP, BENIGN, ""]
_ENCODE: dict[str, int] = {}
AGENTS: list = []  # every official Agent, in the official agent_list order
CARRIERS: list[int] = []  # agents with V_adv in the album at the start of each round


def _register_agents(copy: Path) -> None:
    """Bookkeeping only: record each official Agent as it is built (its behaviour is untouched)."""
    sys.path.insert(0, str(copy / "simulation"))
    agent_module = importlib.import_module("agent_high_batch")
    if getattr(agent_module.Agent, "_recorded", False):
        return
    init = agent_module.Agent.__init__

    def recording_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        AGENTS.append(self)

    agent_module.Agent.__init__ = recording_init
    agent_module.Agent._recorded = True


def _notebook_function(copy: Path):
    """``get_current_cumulative`` from Analyze.ipynb (cell 3), executed as the notebook defines it."""
    cells = json.loads((copy / "Analyze.ipynb").read_text())["cells"]
    source = next("".join(c["source"]) for c in cells if "def get_current_cumulative" in "".join(c["source"]))
    scope: dict = {}
    exec("import pandas as pd\nimport numpy as np\n" + source, scope)
    return scope["get_current_cumulative"]


def record_run(copy: Path, num_agents: int, rounds: int, num_attacks: int, beta: float, jailbreak: float, seed: int,
               draw_seed: int) -> dict:
    """One official run with the stand-in models; returns the pairs, draws, carriers and the notebook's ratios."""
    draws = Draws(num_agents // 2, rounds, beta, jailbreak, draw_seed)
    draws.harmful = (copy / "data/attack_image/targets/sampling_targets1.txt").read_text().splitlines()[1].strip()
    _DECODE[3] = draws.harmful
    _ENCODE.clear()
    _ENCODE.update({text: i for i, text in enumerate(_DECODE)})
    _stub_models(draws)
    _register_agents(copy)
    module = importlib.reload(importlib.import_module("simulation_test_batch"))
    AGENTS.clear()
    CARRIERS.clear()
    with tempfile.TemporaryDirectory() as tmp, contextlib.chdir(tmp):
        os.makedirs("data/attack_image/targets")
        os.symlink(copy / "data/million_villagers_1024_test.json", "data/million_villagers_1024_test.json")
        os.symlink(copy / "data/attack_image/targets/sampling_targets1.txt",
                   "data/attack_image/targets/sampling_targets1.txt")
        sys.argv = ["simulation_test_batch.py", "--attack_image", ATTACK, "--num_attacks", str(num_attacks), "--high",
                    "--num_agents", str(num_agents), "--num_rounds", str(rounds), "--seed", str(seed)]
        args = module.parse_args()
        start = time.process_time()  # CPU seconds: the shared recording machine's wall clock is noisy
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            module.main(args)
        seconds = time.process_time() - start
        CARRIERS.append(sum(ATTACK in agent.album for agent in AGENTS))  # after the last round
        df, rag, _, _, current, cumulative = _notebook_function(copy)(
            method="border", budget=6, group_idx=1, index=2, train="high", num_attacks=num_attacks, high=True,
            num_agents=num_agents, num_rounds=rounds, max_records=3, album_length=10, seed=seed)
    index = {agent.agent_name: i for i, agent in enumerate(AGENTS)}
    pairs = [[[index[q], index[a]] for q, a in zip(g["agent"], g["paired_agent"])]
             for _, g in df.sort_values(["round", "idx"]).groupby("round")]
    rag = rag.assign(qflag=(rag["active_action_output"] == draws.harmful).astype(int),
                     aflag=(rag["passive_action_output"] == draws.harmful).astype(int),
                     ragflag=rag["rag_flag"].astype(int))
    by_round = rag.groupby("round")  # rates over the chats whose questioner carries V_adv (None: no carrier)
    rates = {name: [float(by_round[col].mean()[r]) if r in by_round.groups else None for r in range(rounds)]
             for name, col in (("beta_t", "ragflag"), ("alpha_q_t", "qflag"), ("alpha_a_t", "aflag"))}
    return {"pairs": pairs, **{f"{key}_bits": np.packbits(getattr(draws, key), axis=1).tolist()
                               for key in ("retrieve", "jailbreak_q", "jailbreak_a")},
            "carriers": [int(c) for c in CARRIERS], "carrier_questioners": [int(by_round.size().get(r, 0))
                                                                           for r in range(rounds)],
            "current": [float(x) for x in current], "cumulative": [float(x) for x in cumulative], "rates": rates,
            "seconds": seconds, "seeded": list(range(num_attacks))}


def main() -> None:
    copy = official_copy("Agent-Smith", "simulation/simulation_test_batch.py")
    cases = []
    exact = [("table1_low_diversity_rates_1_seed42", 256, 32, 1, 1.0, 1.0, 42, 0),
             ("rates_0.9_0.8_seed42", 128, 24, 1, 0.9, 0.8, 42, 1),
             ("rates_0.8_0.6_four_seeded_seed7", 64, 16, 4, 0.8, 0.6, 7, 2)]
    for name, n, rounds, attacks, beta, jail, seed, draw_seed in exact:
        run = record_run(copy, n, rounds, attacks, beta, jail, seed, draw_seed)
        cases.append({"name": name, "call": "simulation/simulation_test_batch.py main() + Analyze.ipynb "
                      "get_current_cumulative, models replaced by draws",
                      "inputs": {"num_agents": n, "rounds": rounds, "num_attacks": attacks, "beta": beta,
                                 "jailbreak": jail, "seed": seed, "draw_seed": draw_seed, "album_length": 10,
                                 "pairs": run["pairs"], "seeded": run["seeded"],
                                 **{k: run[k] for k in ("retrieve_bits", "jailbreak_q_bits", "jailbreak_a_bits")}},
                      "values": {"carriers": run["carriers"], "carrier_questioners": run["carrier_questioners"],
                                 "current": run["current"],
                                 "cumulative": run["cumulative"], "rates": run["rates"]},
                      "tolerance": 0.0, "official_seconds": run["seconds"]})
        print(name, "cumulative p16", run["cumulative"][16] if rounds > 16 else None, f"{run['seconds']:.2f} s")
    # many seeds: the distribution of the official curves at one rate setting (ours with its own RNG must match)
    n, rounds, attacks, beta, jail, seeds = 128, 24, 2, 0.9, 0.8, 48
    curves = {"current": [], "cumulative": [], "carriers": []}
    for s in range(seeds):
        run = record_run(copy, n, rounds, attacks, beta, jail, 1000 + s, 5000 + s)
        for key in curves:
            curves[key].append(run[key])
    values = {}
    for key, c in curves.items():
        arr = np.asarray(c, float) / (n if key == "carriers" else 1)
        values[f"{key}_mean"] = arr.mean(0).tolist()
        values[f"{key}_se"] = (arr.std(0, ddof=1) / np.sqrt(seeds)).tolist()
    cases.append({"name": "mean_curves_48_seeds", "call": "as above, 48 seeds (pairing seeds 1000-1047, draw seeds "
                  "5000-5047)", "inputs": {"num_agents": n, "rounds": rounds, "num_attacks": attacks, "beta": beta,
                                           "jailbreak": jail, "seeds": seeds},
                  "values": values, "tolerance": 4.0,
                  "notes": "tolerance in combined standard errors: |mean_ours - mean_official| <= 4 sqrt(se_o^2 + "
                           "se_ours^2) per round; carriers are divided by N (the carrier ratio at the start of each "
                           "round, and after the last)"})
    path = write_fixture("agent-smith", "sail-sg/Agent-Smith", commit_of(copy), cases,
                  notes="Official round loop and notebook metrics run unchanged; only the models (LLaVA, CLIP) are "
                        "stand-ins that draw retrieval and jailbreak at fixed rates (see the recorder). Exact cases "
                        "replay the official pairs and draws through ours (tolerance 0). The first case reproduces the "
                        "paper's Table 1 low-diversity cells: cumulative p_16 = 93.75%, first round >= 90% = 15, "
                        "p_24 = 99.61%. Draws are stored per round as numpy.packbits bytes (big-endian bit order, "
                        "N/2 chats).")
    # one line per list of numbers (the pairs and draws would take a line per number)
    text = re.sub(r"\[[\d\s,.eE+\-]*\]", lambda m: re.sub(r"\s+", "", m.group(0)), path.read_text())
    path.write_text(text)


if __name__ == "__main__":
    main()
