"""GenCO (Ferber et al., ICML 2024): generators with a combinatorial solver in the loop."""
