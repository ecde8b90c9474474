"""icml24: faithful, fast implementations of 19 ICML 2024 methods, and a suite that checks their claims."""

import os as _os
from pathlib import Path as _Path

__version__ = "0.1.0"

# numba's compiled-kernel cache goes to the user cache folder, never into the installed package's source tree
# (read when numba is first imported; an explicit NUMBA_CACHE_DIR wins).
_os.environ.setdefault("NUMBA_CACHE_DIR", str(_Path.home() / ".cache" / "icml24" / "numba"))
