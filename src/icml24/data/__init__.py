"""Datasets and models shared across fields, each with a real loader (no download at import time)."""

from icml24._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "planetoid": ".graphs",
    "csbm": ".graphs",
    "data_root": ".graphs",
    "check_data_root": ".graphs",
    "planetoid_missing": ".graphs",
    "edge_homophily": ".graphs",
    "cert_graph": ".cert_graphs",
    "cert_split": ".cert_graphs",
    "cert_votes": ".cert_graphs",
    "cert_missing": ".cert_graphs",
    "cert_graph_file": ".cert_graphs",
    "cert_votes_file": ".cert_graphs",
    "smollm2": ".models",
    "smollm2_path": ".models",
    "smollm2_available": ".models",
    "digits": ".images",
    "mnist1d": ".images",
    "load_source": ".images",
    "image_tasks": ".images",
    "derive_task": ".images",
    "split_indices": ".images",
    "ImageTask": ".images",
    "TASK_SPECS": ".images",
    "LABEL_MAPS": ".images",
    "label_map": ".images",
    "pretraining_specs": ".images",
    "pretraining_mixture": ".images",
    "text_corpus": ".text",
    "text_splits": ".text",
    "byte_tokens": ".text",
    "shakespeare_available": ".text",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
