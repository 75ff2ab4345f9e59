#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Unit tests of tools/seeds/stats.py against values worked out by hand
(the formulas written out below each, not the module's code), run by
tests/cli/seeds.sh (one TAP line each) or alone: python3 tests/cli/seeds_stats.py.
Prints "PASS <test>" or "FAIL <test>" per test and "# " lines under a
failure; exits 1 when any failed."""
import math
import os
import sys
import traceback
import unittest

sys.path.insert(0, os.environ.get("TEST_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
from tools.seeds import stats  # noqa: E402 (after the path it is found on)

INF = math.inf


class Wilson(unittest.TestCase):
    # z = 1.959964, z^2 = 3.841459, n = 5: z^2/n = 0.768292, 1 + z^2/n = 1.768292.

    def test_3_of_5(self):
        """Wilson 3/5: centre (0.6 + 0.384146) / 1.768292 = 0.556553, half-width 1.959964 / 1.768292 *
        sqrt(0.24/5 + 3.841459/100) = 1.108393 * 0.293963 = 0.325826: [0.230727, 0.882379]
        (published tables: 0.2307 to 0.8824)"""
        lo, hi = stats.wilson(3, 5)
        self.assertAlmostEqual(lo, 0.230727, places=5)
        self.assertAlmostEqual(hi, 0.882379, places=5)

    def test_0_of_5(self):
        """Wilson 0/5: [0, z^2 / (n + z^2)] = [0, 3.841459 / 8.841459] = [0, 0.434482]"""
        lo, hi = stats.wilson(0, 5)
        self.assertAlmostEqual(lo, 0.0, places=12)
        self.assertAlmostEqual(hi, 0.434482, places=5)

    def test_5_of_5(self):
        """Wilson 5/5: [n / (n + z^2), 1] = [5 / 8.841459, 1] = [0.565518, 1]"""
        lo, hi = stats.wilson(5, 5)
        self.assertAlmostEqual(lo, 0.565518, places=5)
        self.assertAlmostEqual(hi, 1.0, places=12)

    def test_none_of_none(self):
        """Wilson 0/0: undefined (None)"""
        self.assertIsNone(stats.wilson(0, 0))


class Iqm(unittest.TestCase):
    def test_n8(self):
        """IQM of 1..8: 2 cut at each end, mean of 3, 4, 5, 6 = 4.5"""
        self.assertEqual(stats.iqm([8, 1, 7, 2, 6, 3, 5, 4]), 4.5)

    def test_n5(self):
        """IQM of 1, 2, 3, 4, 100: int(1.25) = 1 cut at each end, mean of 2, 3, 4 = 3"""
        self.assertEqual(stats.iqm([100, 1, 2, 3, 4]), 3.0)

    def test_n6(self):
        """IQM of 10, 1, 2, 3, 4, 5: int(1.5) = 1 cut at each end, mean of 2, 3, 4, 5 = 3.5"""
        self.assertEqual(stats.iqm([10, 1, 2, 3, 4, 5]), 3.5)

    def test_n7(self):
        """IQM of 1..6 and 70: int(1.75) = 1 cut at each end, mean of 2..6 = 4"""
        self.assertEqual(stats.iqm([1, 2, 3, 4, 5, 6, 70]), 4.0)

    def test_n3_n1_n0(self):
        """IQM of 1, 2, 9: nothing cut (int(0.75) = 0), the mean 4; of one value, that value; of none, None"""
        self.assertEqual(stats.iqm([9, 1, 2]), 4.0)
        self.assertEqual(stats.iqm([7]), 7.0)
        self.assertIsNone(stats.iqm([]))


class MeanSd(unittest.TestCase):
    def test_sample_sd(self):
        """mean and sample sd of 2, 4, 4, 4, 5, 5, 7, 9: 5 and sqrt(32 / 7) = 2.138090"""
        m, sd = stats.mean_sd([2, 4, 4, 4, 5, 5, 7, 9])
        self.assertEqual(m, 5.0)
        self.assertAlmostEqual(sd, 2.138090, places=6)

    def test_one_and_none(self):
        """mean of one value, no sd; of none, neither"""
        self.assertEqual(stats.mean_sd([3.5]), (3.5, None))
        self.assertEqual(stats.mean_sd([]), (None, None))


class ProbImprovement(unittest.TestCase):
    def test_all_better(self):
        """P(X > Y), fewer is better: X = 1, 2 against Y = 3, 4: every pair won, 1"""
        self.assertEqual(stats.prob_improvement([1, 2], [3, 4], lower_is_better=True), 1.0)
        self.assertEqual(stats.prob_improvement([3, 4], [1, 2], lower_is_better=True), 0.0)

    def test_ties_half(self):
        """P(X > Y), fewer is better: X = 1, 3 against Y = 2, 3: (1,2) won, (1,3) won, (3,2) lost,
        (3,3) tied: 2.5 / 4 = 0.625"""
        self.assertEqual(stats.prob_improvement([1, 3], [2, 3], lower_is_better=True), 0.625)

    def test_unsolved(self):
        """P(X > Y), fewer is better, unsolved = inf: X = inf, 5 against Y = inf, inf: two ties and two
        wins, 3 / 4 = 0.75"""
        self.assertEqual(stats.prob_improvement([INF, 5], [INF, INF], lower_is_better=True), 0.75)

    def test_higher_better(self):
        """P(X > Y), more is better: X = 3 against Y = 1, 3, 5: win, tie, loss: 1.5 / 3 = 0.5"""
        self.assertEqual(stats.prob_improvement([3], [1, 3, 5]), 0.5)

    def test_complement(self):
        """fewer is better, X = 1, 4, 4, 9, Y = 2, 4, 7, 8: P(X > Y) = (4 + 2.5 + 2.5 + 0) / 16 = 9/16,
        P(Y > X) = (3 + 2 + 1 + 1) / 16 = 7/16, together 1"""
        x, y = [1, 4, 4, 9], [2, 4, 7, 8]
        self.assertEqual(stats.prob_improvement(x, y, True), 9 / 16)
        self.assertEqual(stats.prob_improvement(y, x, True), 7 / 16)

    def test_empty(self):
        """P(X > Y) with no runs of X: None"""
        self.assertIsNone(stats.prob_improvement([], [1]))
        self.assertIsNone(stats.prob_improvement_ci([], [1]))


class Bootstrap(unittest.TestCase):
    X = [12, 3, 45, 7, 7, 30, 18, 2, 26, 9]  # IQM: cut 2 at each end, mean of 7, 7, 9, 12, 18, 26 = 79/6

    def test_iqm_of_x(self):
        """the IQM the intervals are about: 79/6"""
        self.assertAlmostEqual(stats.iqm(self.X), 79 / 6, places=12)

    def test_reproducible(self):
        """the same seed gives the same interval, twice"""
        self.assertEqual(stats.bootstrap_ci(self.X, seed=7), stats.bootstrap_ci(self.X, seed=7))
        self.assertEqual(stats.bootstrap_ci(self.X), stats.bootstrap_ci(list(self.X)))
        self.assertEqual(stats.prob_improvement_ci(self.X, [5, 20, 40], seed=3),
                         stats.prob_improvement_ci(self.X, [5, 20, 40], seed=3))

    def test_contains(self):
        """the IQM's 95% interval contains the IQM and lies within [min, max], for several seeds"""
        for seed in range(5):
            lo, hi = stats.bootstrap_ci(self.X, seed=seed)
            self.assertLessEqual(lo, stats.iqm(self.X))
            self.assertGreaterEqual(hi, stats.iqm(self.X))
            self.assertGreaterEqual(lo, min(self.X))
            self.assertLessEqual(hi, max(self.X))
            self.assertLess(lo, hi)

    def test_constant(self):
        """of five equal values: [v, v]; of none: None"""
        self.assertEqual(stats.bootstrap_ci([4.5] * 5), (4.5, 4.5))
        self.assertIsNone(stats.bootstrap_ci([]))

    def test_prob_interval(self):
        """P(X > Y)'s interval: contains P, within [0, 1]; [1, 1] when every run of X beats every run of Y"""
        x, y = [1, 4, 4, 9], [2, 4, 7]
        lo, hi = stats.prob_improvement_ci(x, y, True)
        self.assertTrue(0 <= lo <= stats.prob_improvement(x, y, True) <= hi <= 1)
        self.assertEqual(stats.prob_improvement_ci([1, 2], [INF, 3], True), (1.0, 1.0))


def tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests(t)
        else:
            yield t


def main():
    failed = 0
    for t in tests(unittest.defaultTestLoader.loadTestsFromModule(sys.modules[__name__])):
        r = unittest.TestResult()
        t.run(r)
        name = " ".join((getattr(t, t._testMethodName).__doc__ or t.id()).split())
        bad = r.failures + r.errors
        print(("FAIL " if bad else "PASS ") + name)
        for _, tb in bad:
            for line in tb.splitlines():
                print("# " + line)
        failed += bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
