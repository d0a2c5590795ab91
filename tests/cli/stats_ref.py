"""Independent reference computations for the interval tests (scipy/numpy),
written from the definitions in docs/statistics.md, not from the C code."""
import numpy as np
from scipy import stats as st


def order_stat_interval(x, q, conf=0.95):
    """The distribution-free interval of the q-quantile: of the rank pairs whose
    binomial coverage is >= conf, the one with the fewest ranks between them,
    then the closest tails, then the lower. (lo, hi) sample values, or None
    when no pair covers."""
    x = np.sort(np.asarray(x, dtype=float))
    n = x.size
    k = np.arange(n + 1)
    cdf, sf = st.binom.cdf(k, n, q), st.binom.sf(k - 1, n, q)
    best = None
    for lo in range(1, n):
        for hi in range(lo + 1, n + 1):
            if cdf[lo - 1] + sf[hi] <= 1 - conf:
                key = (hi - lo, abs(cdf[lo - 1] - sf[hi]))
                if best is None or key[0] < best[0][0] or (
                        key[0] == best[0][0] and key[1] < best[0][1] - 1e-12):
                    best = (key, lo, hi)
                break
    return None if best is None else (float(x[best[1] - 1]), float(x[best[2] - 1]))
