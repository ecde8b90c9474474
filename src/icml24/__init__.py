"""icml24: faithful, fast implementations of 19 ICML 2024 methods, and a suite that checks their claims."""

import os as _os

__version__ = "0.1.0"

# numba's compiled-kernel cache and matplotlib's config/font cache go to the user cache folder, never into the
# installed package's source tree or ~/.config (read when each is first imported; an explicit variable wins).
# Only ``os`` (loaded with the interpreter) is used here: the ``icml24`` command imports this package before it can
# defer Ctrl-C (``icml24._entry``), so this module must take no time a Ctrl-C could land in (pathlib takes ~30 ms).
_CACHE = _os.path.join(_os.environ.get("XDG_CACHE_HOME") or _os.path.join(_os.path.expanduser("~"), ".cache"),
                       "icml24")
_os.environ.setdefault("NUMBA_CACHE_DIR", _os.path.join(_CACHE, "numba"))
_os.environ.setdefault("MPLCONFIGDIR", _os.path.join(_CACHE, "matplotlib"))
