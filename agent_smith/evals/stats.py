"""The numbers of an eval: pass@k, pass^k, the spread of repeats and the noise band.

With ``n`` runs of a case of which ``c`` passed:

* pass@k, the chance that at least one of ``k`` runs passes, estimated
  without bias as ``1 - C(n-c, k) / C(n, k)`` (Chen et al., 2021);
* pass^k, the chance that all ``k`` runs pass, as ``C(c, k) / C(n, k)``
  (Yao et al., τ-bench, 2024);
* the standard error of a pass rate, from the variance the repeats show:
  each case a Bernoulli trial with variance ``p(1-p)/n``, averaged over the
  cases. Two rates differ beyond noise when they are further apart than
  :func:`noise_band` (two standard errors of the difference, about 95%).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs passes (``n`` runs, ``c`` passed)."""
    if n == 0 or k < 1:
        return 0.0
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all of ``k`` runs pass (``n`` runs, ``c`` passed)."""
    if n == 0 or k < 1:
        return 0.0
    k = min(k, n)
    return math.comb(c, k) / math.comb(n, k)


def rate_error(rates: Sequence[tuple[float, int]]) -> float:
    """Standard error of the mean of per-case pass rates, given ``(rate, runs)`` per case."""
    if not rates:
        return 0.0
    variance = sum(p * (1.0 - p) / n for p, n in rates if n > 0)
    return math.sqrt(variance) / len(rates)


def noise_band(error_a: float, error_b: float) -> float:
    """How far apart two rates with these standard errors may be by chance (2 sigma)."""
    return 2.0 * math.hypot(error_a, error_b)


def spread(values: Sequence[float]) -> float:
    """The standard deviation of ``values`` (0 for fewer than two)."""
    return statistics.stdev(values) if len(values) > 1 else 0.0


def quantile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values``, interpolated; 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)
