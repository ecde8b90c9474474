"""icml24.kernels: kernel ridgeless (minimum-norm) regression, eigenspectra and condition numbers.

Methods for Cheng, Lucchi, Kratsios & Belius, "Characterizing Overfitting in Kernel Ridgeless Regression Through
the Eigenspectrum" (ICML 2024): honest interpolating solves (a residual check, extended precision where float64
breaks, a clear error instead of a silently regularized solve), synthetic spectra with prescribed eigendecay, the
condition-number bounds, and estimators of cond(K), bias and variance V = tr(Lambda Psi^T K^-2 Psi Lambda).
"""

from icml24._extras import require
from icml24._lazy import lazy_exports

require("kernels")  # the modules of icml24[kernels] are installed, or an ImportError names the extra

# exported name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    "eigendecay": ".spectra",
    "gaussian_features": ".spectra",
    "fit_eigendecay": ".spectra",
    "kernel_matrix": ".radial",
    "gaussian_mehler_decay": ".radial",
    "gaussian_bandwidth_for_decay": ".radial",
    "InterpolationError": ".solve",
    "InterpolationSolve": ".solve",
    "honest_solve": ".solve",
    "extended_lu_solve": ".solve",
    "precision_digits": ".solve",
    "KernelRidgeless": ".ridgeless",
    "KernelRidgeCV": ".ridgeless",
    "SpectralEstimate": ".estimators",
    "spectral_estimates": ".estimators",
    "spectral_interpolation_risk": ".estimators",
    "variance_per_feature_loop": ".estimators",
    "variance_monte_carlo": ".estimators",
    "design_points": ".designs",
    "design_size": ".designs",
    "separation": ".designs",
    "condition_number_bounds": ".bounds",
    "condition_number_rate": ".bounds",
    "variance_bound": ".bounds",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
