"""Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast (Gu et al., 2024).

A vectorized pair-wise chat simulation up to 2^20 agents counting infection as the official code does, beside the
theory (Eq. 5, 7, 8, 13-15, beta <= 2 gamma), and a small real society of retrieval + response models under attack.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="agent-smith",
    title="Agent Smith: A Single Image Can Jailbreak One Million Multimodal LLM Agents Exponentially Fast",
    authors="Xiangming Gu, Xiaosen Zheng, Tianyu Pang, Chao Du, Qian Liu, Ye Wang, Jing Jiang, Min Lin",
    venue="ICML 2024",
    code="https://github.com/sail-sg/Agent-Smith",
    summary=("One adversarial image spreads through randomized pair-wise chats: a carrier questioner retrieves it "
             "(beta), the answerer stores it, an agent is infected when its output in a chat is the target (alpha = "
             "retrieval x jailbreak). We simulate up to 2^20 agents, check the paper's numbers at its rates and its "
             "theory, and craft the border attack against a small real society."),
    deviations=[
        "No LLaVA/CLIP agents at scale: retrieval and jailbreak are draws per chat at the rates beta and alpha / beta "
        "(the paper's abstraction, Sec. 3.1); FIFO albums as in the paper; the text history (|H| = 3) is inert.",
        "Infection is counted as the official code counts it (the chat's output is the target, which needs V_adv "
        "retrieved in that chat); the theory's independent symptom coin per carrier is kept as "
        "definition='bernoulli'.",
        "The paper's rates are read as alpha = beta = 1 (our reading): the official round loop at rates 1 reproduces "
        "Table 1's low-diversity cells exactly (93.75% / round 15 / 99.61%, identical for every attack there), and "
        "the paper does not tabulate the rates of its 1M run; the (alpha, beta) sensitivity is reported as a figure.",
        "The paper's '~100%' cumulative level of Fig. 1 is read as 99.9% (our reading: 100.0% at one decimal).",
        "The real society is a stand-in: 8 x 8-patch encoders on 112 px procedural images, a responder with one "
        "HARMFUL token, 512 benign records (paper 1024); the paper's h = 6 border on 336 px is h = 2 here (7%).",
        "The defence sweep uses beta = 0.8 with jailbreak 0.95 (alpha = 0.76), since Fig. 9's alpha = 0.95 > beta "
        "is impossible under the official definition; the claim reads carriers only.",
        "The real society's oracle (an ideal image, alpha = beta = 1) is spread by the pair-wise chat simulation, "
        "since the society's tables take no ideal image.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
