"""Two encoders scored on the same items against the same gold give two dependent, overlapping correlations
r(g, a), r(g, b) with r(a, b): Williams' t (Williams 1959; Steiger 1980 eq. 7), Steiger's Z (Steiger 1980)
and Zou's (2007) interval of the difference, written after the R package cocor (Diedenhofen & Musch 2015)
and tested against its documented examples; the Fisher-z difference the claims pool; and, for published
numbers without per-item scores, :func:`unknown_r_ab_test` (the worst case over r(a, b)).

Bad input (|r| > 1, n ≤ 3, an impossible correlation matrix) raises :class:`~benchbox.errors.BenchboxError`.
"""

from __future__ import annotations

import numpy as np

from benchbox.errors import BenchboxError
from benchbox.stats.intervals import as_scalars, fisher_ci

# each is tested against cocor's documented examples.


def _check_r(name: str, r: np.ndarray) -> None:
    if not np.all(np.isfinite(r)) or np.any(np.abs(r) > 1):
        raise BenchboxError(f"{name} must be a correlation in [-1, 1], got {r.ravel()[:5].tolist()}")


def _check_n(n: np.ndarray) -> None:
    if not np.all(np.isfinite(n)) or np.any(n <= 3):
        raise BenchboxError(f"n must be > 3 to compare correlations, got {n.ravel()[:5].tolist()}")


def _dependent_args(r_ga, r_gb, r_ab, n) -> tuple[np.ndarray, ...]:
    arrays = [np.asarray(x, dtype=float) for x in (r_ga, r_gb, r_ab, n)]
    for name, r in zip(("r_ga", "r_gb", "r_ab"), arrays[:3]):
        _check_r(name, r)
    _check_n(arrays[3])
    try:
        arrays = list(np.broadcast_arrays(*arrays))
    except ValueError as exc:
        raise BenchboxError(f"r_ga, r_gb, r_ab and n have incompatible shapes: {exc}") from None
    if np.any(_det3(*arrays[:3]) < -1e-9):
        raise BenchboxError("r_ga, r_gb and r_ab cannot hold together: their correlation matrix is not positive "
                            "semi-definite (see feasible_r_ab)")
    return tuple(arrays)


def _det3(r_ga: np.ndarray, r_gb: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Determinant of the 3×3 correlation matrix of (gold, a, b)."""
    return 1 - r_ga**2 - r_gb**2 - r_ab**2 + 2 * r_ga * r_gb * r_ab


def williams_test(r_ga, r_gb, r_ab, n):
    """Williams' (1959) t for two dependent correlations sharing the variable g (e.g. the gold scores),
    r(g, a) vs r(g, b), given r(a, b), in the form of Steiger (1980, eq. 7); df = n − 3, two-sided.

    Vectorised over its arguments; returns ``(t, p)``. Reproduces cocor's ``williams1959``
    (Diedenhofen & Musch 2015): (.3, .4, .5, n=100) → t = −1.0767, p = .2843.
    """
    from scipy import stats as st

    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    r_mean = (r_ga + r_gb) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (r_ga - r_gb) * np.sqrt(
            (n - 1) * (1 + r_ab)
            / (2 * (n - 1) / (n - 3) * _det3(r_ga, r_gb, r_ab) + r_mean**2 * (1 - r_ab) ** 3)
        )
    t = np.where(r_ga == r_gb, 0.0, t)
    p = 2 * st.t.sf(np.abs(t), n - 3)
    return as_scalars(t, p)


def steiger_covariance(r_pooled: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Steiger's (1980, eq. 11 with eq. 14) covariance of the two Fisher z's of r(g, a) and r(g, b) (in units of
    1/(n − 3): their correlation) under H0, at the pooled r and r(a, b)."""
    rp2 = r_pooled**2
    return (r_ab * (1 - 2 * rp2) - 0.5 * rp2 * (1 - 2 * rp2 - r_ab**2)) / (1 - rp2) ** 2


def _steiger_z(r_ga: np.ndarray, r_gb: np.ndarray, cov: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    from scipy import stats as st

    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(n - 3) * (np.arctanh(r_ga) - np.arctanh(r_gb)) / np.sqrt(2 - 2 * cov)
    z = np.where(r_ga == r_gb, 0.0, z)
    return z, 2 * st.norm.sf(np.abs(z))


def steiger_test(r_ga, r_gb, r_ab, n):
    """Steiger's (1980) Z for two dependent overlapping correlations (Dunn & Clark's 1969 z of the Fisher-z
    difference, with the covariance of eq. 14/15 evaluated at the pooled r̄ = (r_ga + r_gb)/2), two-sided.

    Follows cocor's ``steiger1980``: Steiger (1980) case A, (.4, .5, .1, n=103) → z = −0.8887185.
    Vectorised; returns ``(z, p)``.
    """
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    return as_scalars(*_steiger_z(r_ga, r_gb, steiger_covariance((r_ga + r_gb) / 2, r_ab), n))


def _zou_interval(r_ga, r_gb, c, n, level: float) -> tuple[np.ndarray, np.ndarray]:
    """Zou's (2007, p. 409) interval for r_ga − r_gb from the two Fisher intervals and their correlation c."""
    l1, u1 = fisher_ci(r_ga, n, level)
    l2, u2 = fisher_ci(r_gb, n, level)
    d = r_ga - r_gb
    low = d - np.sqrt(np.maximum((r_ga - l1) ** 2 + (u2 - r_gb) ** 2 - 2 * c * (r_ga - l1) * (u2 - r_gb), 0))
    high = d + np.sqrt(np.maximum((u1 - r_ga) ** 2 + (r_gb - l2) ** 2 - 2 * c * (u1 - r_ga) * (r_gb - l2), 0))
    return np.asarray(low, dtype=float), np.asarray(high, dtype=float)


def _zou_corr(r_ga: np.ndarray, r_gb: np.ndarray, r_ab: np.ndarray) -> np.ndarray:
    """Correlation between r_ga and r_gb (Zou 2007, p. 409; Dunn & Clark 1969). The cubic terms cancel:
    the numerator is ½ r_ga r_gb r_ab² + (1 − r_ga² − r_gb²) r_ab − ½ r_ga r_gb (1 − r_ga² − r_gb²)."""
    k = 1 - r_ga**2 - r_gb**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return (0.5 * r_ga * r_gb * r_ab**2 + k * r_ab - 0.5 * r_ga * r_gb * k) / ((1 - r_ga**2) * (1 - r_gb**2))


def zou_ci(r_ga, r_gb, r_ab, n, level: float = 0.95):
    """Zou's (2007) confidence interval for r_ga − r_gb, two dependent overlapping correlations.

    Vectorised; returns ``(low, high)``. Reproduces Zou (2007) / cocor ``zou2007``:
    (.396, .179, .088, n=66) → (−.093, .517).
    """
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    return as_scalars(*_zou_interval(r_ga, r_gb, _zou_corr(r_ga, r_gb, r_ab), n, level))


def fisher_z_difference(r_ga, r_gb, r_ab, n):
    """atanh r(g, a) − atanh r(g, b) and its sampling variance (2 − 2·c)/(n − 3), with c the covariance of
    the two Fisher z's of Steiger (1980, eq. 11 with eq. 14) at the pooled r̄ — the variance behind
    :func:`steiger_test`, so z = diff / √var is Steiger's Z. The common scale on which
    :mod:`benchbox.stats.pooling` pools correlation rows. Vectorised; returns ``(diff, var)``."""
    r_ga, r_gb, r_ab, n = _dependent_args(r_ga, r_gb, r_ab, n)
    cov = steiger_covariance((r_ga + r_gb) / 2, r_ab)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.arctanh(np.clip(r_ga, -1 + 1e-12, 1 - 1e-12)) - np.arctanh(np.clip(r_gb, -1 + 1e-12, 1 - 1e-12))
    return as_scalars(diff, (2 - 2 * cov) / (n - 3))


def feasible_r_ab(r_ga, r_gb) -> tuple[np.ndarray, np.ndarray]:
    """The range of r(a, b) for which the correlation matrix of (g, a, b) is positive semi-definite:
    r_ga r_gb ± √((1 − r_ga²)(1 − r_gb²))."""
    r_ga, r_gb = np.asarray(r_ga, dtype=float), np.asarray(r_gb, dtype=float)
    half = np.sqrt(np.clip((1 - r_ga**2) * (1 - r_gb**2), 0, None))
    return np.clip(r_ga * r_gb - half, -1, 1), np.clip(r_ga * r_gb + half, -1, 1)


def _min_quadratic(a: np.ndarray, b: np.ndarray, c0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min over x in [lo, hi] of a x² + b x + c0, elementwise (a ≤ 0: concave or linear, the minimum is at an
    end; the vertex candidate then falls back to ``lo``)."""
    candidates = [a * lo**2 + b * lo + c0, a * hi**2 + b * hi + c0]
    with np.errstate(divide="ignore", invalid="ignore"):
        vertex = np.where(a > 0, -b / (2 * a), lo)
    vertex = np.clip(vertex, lo, hi)
    candidates.append(a * vertex**2 + b * vertex + c0)
    return np.minimum.reduce(candidates)


def unknown_r_ab_test(r_ga, r_gb, n, level: float = 0.95):
    """Compare two correlations measured on the same n items when r(a, b) is unknown (published numbers
    without per-item scores): the worst case over every r(a, b) consistent with r_ga and r_gb.

    Both Steiger's (1980) Z and Zou's (2007) interval depend on r(a, b) only through the covariance of the
    two correlations, which is a quadratic in r(a, b) (see :func:`_zou_corr`; Steiger's pooled form likewise).
    The variance of the difference is largest where that covariance is smallest, so taking the minimum over
    the feasible range (:func:`feasible_r_ab`) gives the largest p and the widest interval that any true
    r(a, b) would produce: a conservative test, valid whatever r(a, b) is (asymptotically). Treating the two
    correlations as independent is not always conservative (the covariance can be negative).

    Vectorised; returns ``(z, p, low, high)``.
    """
    r_ga, r_gb, n = (np.asarray(x, dtype=float) for x in (r_ga, r_gb, n))
    _check_r("r_ga", r_ga)
    _check_r("r_gb", r_gb)
    _check_n(n)
    r_ga, r_gb, n = np.broadcast_arrays(r_ga, r_gb, n)
    lo, hi = feasible_r_ab(r_ga, r_gb)
    rp2 = ((r_ga + r_gb) / 2) ** 2
    scale = (1 - rp2) ** 2
    steiger_min = _min_quadratic(0.5 * rp2 / scale, (1 - 2 * rp2) / scale, -0.5 * rp2 * (1 - 2 * rp2) / scale, lo, hi)
    k = 1 - r_ga**2 - r_gb**2
    denom = (1 - r_ga**2) * (1 - r_gb**2)
    with np.errstate(divide="ignore", invalid="ignore"):
        zou_min = _min_quadratic(0.5 * r_ga * r_gb / denom, k / denom, -0.5 * r_ga * r_gb * k / denom, lo, hi)
    z, p = _steiger_z(r_ga, r_gb, steiger_min, n)
    low, high = _zou_interval(r_ga, r_gb, zou_min, n, level)
    return as_scalars(z, p, low, high)
