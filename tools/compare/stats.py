# SPDX-License-Identifier: MIT
"""Order statistics and the report's number formats."""
import math

DASH = "\u2014"  # shown for a figure that is not defined or not in the run's summary.json


def quantile(values, q):
    """Linear interpolation between order statistics (Hyndman & Fan type 7,
    NumPy's default); None for no values."""
    v = sorted(values)
    if not v:
        return None
    pos = (len(v) - 1) * q
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def median(values):
    return quantile(values, 0.5)


def num(x):
    """A finite number from JSON, or None."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, (int, float)) and math.isfinite(x):
        return x
    return None


def fmt(x, spec):
    return DASH if x is None else format(x, spec)


def fmt_stat(values, spec):
    """median, and the interquartile range when there are two values or more."""
    values = [v for v in values if v is not None]
    if not values:
        return DASH
    m = format(median(values), spec)
    if len(values) == 1:
        return m
    return "%s (IQR %s\u2013%s)" % (m, format(quantile(values, 0.25), spec), format(quantile(values, 0.75), spec))


def fmt_median(values, spec):
    values = [v for v in values if v is not None]
    return DASH if not values else format(median(values), spec)


def fmt_secs(s):
    s = int(round(s))
    if s < 60:
        return "%d s" % s
    if s < 3600:
        return "%d min %02d s" % (s // 60, s % 60)
    return "%d h %02d min" % (s // 3600, (s % 3600) // 60)
