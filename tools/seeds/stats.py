# SPDX-License-Identifier: MIT
"""Statistics of a few runs per config, as Agarwal et al. 2021 ("Deep RL at
the edge of the statistical precipice", the rliable library) recommend, in
the standard library alone:

- wilson(k, n): the Wilson score interval of a success rate (solved k of n);
- iqm(x): the interquartile mean, scipy.stats.trim_mean(x, 0.25): sort,
  cut floor(n / 4) values from each end, average the rest (n = 5: the
  middle 3; n = 1, 2, 3: all of them);
- bootstrap_ci(x, stat): the percentile bootstrap interval of stat(x),
  resampling x with replacement from a fixed seed (reproducible);
- prob_improvement(x, y): P(X > Y), the probability that a random run of X
  is better than a random run of Y, ties counting half (the Mann-Whitney U
  statistic over nx * ny), and its bootstrap interval resampling x and y
  apart (stratified: each config's runs only among themselves);
- mean_sd(x): the mean and the sample standard deviation (n - 1).

Every function returns None for a figure that is not defined (no values,
a standard deviation of one value)."""
import bisect
import math
import random

from ..compare.stats import median, quantile  # noqa: F401 (median: for callers)

# z of the 97.5th percentile of the standard normal: a two-sided 95% interval.
Z95 = 1.959963984540054
BOOT_REPS = 2000
BOOT_SEED = 0


def wilson(k, n, z=Z95):
    """(low, high) of the Wilson score interval of k successes in n trials
    (Wilson 1927): (p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n),
    p = k/n; None for n = 0. Unlike p -+ z sqrt(p(1-p)/n) it stays inside
    [0, 1] and is not empty at k = 0 or k = n."""
    if n <= 0:
        return None
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z / d * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def trim_mean(values, cut):
    """scipy.stats.trim_mean(values, cut): the mean of the sorted values
    less int(cut * n) of them at each end; None for no values."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return None
    k = int(cut * n)
    middle = v[k:n - k]
    return math.fsum(middle) / len(middle)


def iqm(values):
    """Interquartile mean: trim_mean(values, 0.25)."""
    return trim_mean(values, 0.25)


def mean_sd(values):
    """(mean, sample standard deviation); (None, None) for no values, sd
    None for one value."""
    n = len(values)
    if n == 0:
        return None, None
    m = math.fsum(values) / n
    if n == 1:
        return m, None
    return m, math.sqrt(math.fsum((x - m) ** 2 for x in values) / (n - 1))


def _percentile_interval(stats, level):
    a = (1 - level) / 2
    return quantile(stats, a), quantile(stats, 1 - a)


def bootstrap_ci(values, stat=iqm, reps=BOOT_REPS, seed=BOOT_SEED, level=0.95):
    """(low, high): the percentile bootstrap interval of stat(values) from
    reps resamples of len(values) values drawn with replacement, by a
    random.Random(seed) of its own (the same input gives the same interval);
    None for no values."""
    values = list(values)
    n = len(values)
    if n == 0:
        return None
    rng = random.Random(seed)
    stats = [stat([values[rng.randrange(n)] for _ in range(n)]) for _ in range(reps)]
    return _percentile_interval(stats, level)


def prob_improvement(x, y, lower_is_better=False):
    """P(X > Y): the fraction of the pairs (a of x, b of y) where a is better
    than b, a tie counting half; None when x or y is empty. Values may be
    math.inf (with lower_is_better: a run that never got there; two such
    tie)."""
    if not x or not y:
        return None
    ys = sorted(y)
    wins = 0.0
    for a in x:
        below = bisect.bisect_left(ys, a)
        ties = bisect.bisect_right(ys, a) - below
        above = len(ys) - below - ties
        wins += (above if lower_is_better else below) + 0.5 * ties
    return wins / (len(x) * len(ys))


def prob_improvement_ci(x, y, lower_is_better=False, reps=BOOT_REPS, seed=BOOT_SEED, level=0.95):
    """(low, high): the percentile bootstrap interval of prob_improvement,
    resampling x and y each within itself; None when x or y is empty."""
    x, y = list(x), list(y)
    if not x or not y:
        return None
    rng = random.Random(seed)
    nx, ny = len(x), len(y)
    stats = []
    for _ in range(reps):
        bx = [x[rng.randrange(nx)] for _ in range(nx)]
        by = [y[rng.randrange(ny)] for _ in range(ny)]
        stats.append(prob_improvement(bx, by, lower_is_better))
    return _percentile_interval(stats, level)
