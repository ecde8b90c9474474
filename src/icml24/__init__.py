"""icml24: faithful, fast implementations of 19 ICML 2024 methods, and a suite that checks their claims."""

import os as _os
from pathlib import Path as _Path

__version__ = "0.1.0"

# numba's compiled-kernel cache and matplotlib's config/font cache go to the user cache folder, never into the
# installed package's source tree or ~/.config (read when each is first imported; an explicit variable wins).
_CACHE = _Path(_os.environ.get("XDG_CACHE_HOME") or _Path.home() / ".cache") / "icml24"
_os.environ.setdefault("NUMBA_CACHE_DIR", str(_CACHE / "numba"))
_os.environ.setdefault("MPLCONFIGDIR", str(_CACHE / "matplotlib"))
