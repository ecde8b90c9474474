"""icml24.llm: methods (no printing, no file I/O beyond what the caller asks)."""

from icml24._lazy import lazy_exports

# exported name -> submodule that defines it; each method adds its own line(s)
_EXPORTS: dict[str, str] = {
    "ACT": ".act",
    "AttentionCalibration": ".act",
    "HeadSearch": ".act",
    "LabelWordTask": ".tasks",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
