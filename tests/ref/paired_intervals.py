#!/usr/bin/env python3
"""Reference numbers for src/stats/{signed_rank,sign,paired_change}.rs (their unit tests).

Run: python3 tests/ref/paired_intervals.py   (numpy + scipy; checked with scipy 1.17.1)

Per-round log-ratios d = ln(candidate / baseline). At 95% (alpha = 0.05):
- Hodges-Lehmann: the median of the n(n+1)/2 Walsh averages (d_i + d_j) / 2, i <= j. Its
  interval is [W_(k), W_(M+1-k)] (sorted Walsh averages, 1-based), k the largest integer with
  P(T+ <= k-1) <= alpha/2 under the signed-rank null distribution: exact for n <= 25 (counted
  here by brute force / convolution, and checked against scipy's exact p-value), above that
  k = floor(n(n+1)/4 - z sqrt(n(n+1)(2n+1)/24) + 0.5) (normal, continuity-corrected).
  The p-value is scipy.stats.wilcoxon's (zeros dropped; exact n <= 25 without ties, else
  the normal approximation without continuity correction).
- Median: the sample median, interval [d_(k), d_(n+1-k)], k the largest with
  P(B <= k-1) <= alpha/2, B ~ Binomial(n, 1/2); p = scipy.stats.binomtest(#d>0, #d!=0).
- Mean: scipy.stats.ttest_rel(ln cand, ln base) and its confidence_interval().
"""
import math
import numpy as np
from scipy import stats

ALPHA = 0.05


def signed_rank_cdf(n):
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for r in range(1, n + 1):
        nxt = counts.copy()
        nxt[r:] += counts[: len(counts) - r]
        counts = nxt
    return np.cumsum(counts) / 2.0**n


def hl(d):
    n = len(d)
    w = np.sort([(d[i] + d[j]) / 2 for i in range(n) for j in range(i, n)])
    m = len(w)
    if n <= 25:
        cdf = signed_rank_cdf(n)
        k = 0
        while k + 1 <= m and cdf[k] <= ALPHA / 2:  # P(T <= (k+1)-1)
            k += 1
    else:
        z = stats.norm.ppf(1 - ALPHA / 2)
        k = math.floor(n * (n + 1) / 4 - z * math.sqrt(n * (n + 1) * (2 * n + 1) / 24) + 0.5)
    lo, hi = (w[k - 1], w[m - k]) if k >= 1 else (None, None)
    nz = [x for x in d if x != 0]
    method = "exact" if len(nz) <= 25 and len(set(abs(x) for x in nz)) == len(nz) else "approx"
    p = stats.wilcoxon(nz, method=method).pvalue
    return np.median(w), lo, hi, p, k


def sign(d):
    n = len(d)
    s = np.sort(d)
    k = 0
    while k + 1 <= n and stats.binom.cdf(k, n, 0.5) <= ALPHA / 2:
        k += 1
    lo, hi = (s[k - 1], s[n - k]) if k >= 1 else (None, None)
    pos = sum(1 for x in d if x > 0)
    nz = sum(1 for x in d if x != 0)
    p = stats.binomtest(pos, nz, 0.5).pvalue if nz else 1.0
    return np.median(d), lo, hi, p, k


def mean(base, cand):
    r = stats.ttest_rel(np.log(cand), np.log(base))
    ci = r.confidence_interval(0.95)
    return np.mean(np.log(cand) - np.log(base)), ci.low, ci.high, r.pvalue


# 12 rounds, baseline and candidate qps of one cell (round 7 a noisy round).
BASE = [100.0, 98.0, 103.0, 97.0, 101.0, 99.0, 60.0, 102.0, 100.5, 98.5, 101.5, 99.5]
CAND = [95.0, 93.5, 97.0, 93.0, 96.2, 94.0, 70.0, 96.0, 95.5, 94.2, 95.8, 94.9]
# 30 rounds (normal approximation of the signed-rank interval), a fixed pseudo-random set.
rng = np.random.default_rng(52)
BASE30 = list(np.round(1000 * np.exp(rng.normal(0, 0.05, 30)), 3))
CAND30 = list(np.round(np.array(BASE30) * np.exp(rng.normal(-0.03, 0.02, 30)), 3))

if __name__ == "__main__":
    # The exact distribution agrees with scipy's exact test: d = 1, -2, ..., -n has T+ = 1.
    for n in (6, 12, 25):
        d = [1.0] + [-float(r) for r in range(2, n + 1)]
        p = stats.wilcoxon(d, method="exact", alternative="greater").pvalue
        assert abs(signed_rank_cdf(n)[-2] - p) < 1e-12, (n, p)
    np.set_printoptions(precision=17)
    for name, b, c in (("12 rounds", BASE, CAND), ("30 rounds", BASE30, CAND30)):
        d = [math.log(y / x) for x, y in zip(b, c)]
        print(name)
        if name == "30 rounds":
            print("  base", [float(x) for x in b])
            print("  cand", [float(x) for x in c])
        print("  hodges-lehmann (est, lo, hi, p, k):", *[repr(float(v)) for v in hl(d)])
        print("  median (est, lo, hi, p, k):       ", *[repr(float(v)) for v in sign(d)])
        print("  mean (est, lo, hi, p):            ", *[repr(float(v)) for v in mean(b, c)])
