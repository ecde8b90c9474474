"""Offline RL in confounded POMDPs (Hong, Qi & Xu, ICML 2024): simulator, bridges, two-stage estimator, pessimism.

Names are exported from ``icml24.rl``.
"""
