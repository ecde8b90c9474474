"""icml24: faithful, fast implementations of 19 ICML 2024 methods, and a suite that checks their claims."""

__version__ = "0.1.0"
