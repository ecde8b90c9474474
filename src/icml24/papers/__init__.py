"""One module per paper: its Paper record, experiments and claims. Discovered by icml24.core.registry."""
