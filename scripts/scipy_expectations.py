#!/usr/bin/env python3
"""Expected values for sens-bench's statistics module, computed with scipy.

Prints one JSON object: fixed inputs and what scipy (or a brute-force enumeration,
where scipy has no such test) gives for them. The Rust test
`sens-bench/tests/report_stats_scipy.rs` runs this script and compares.
"""
import itertools
import json

import numpy as np
from scipy import stats

ALTERNATIVES = ["two-sided", "less", "greater"]

# Independent samples: (x, y). Small enough to enumerate; some with ties.
PERMUTATION_INPUTS = [
    ([100.0, 110.0, 120.0], [130.0, 150.0, 140.0]),
    ([12.0, 30.0, 7.0, 19.0], [25.0, 40.0, 33.0]),
    ([1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0, 0.0, 1.0]),
    ([3.5, 2.25, 9.0, 4.0, 4.0], [4.0, 8.5, 7.75, 11.0, 6.0]),
    ([210.0, 180.0], [205.0, 240.0, 199.0]),
]

# Strata (tasks) of (condition, baseline) for the stratified test.
STRATIFIED_INPUTS = [
    [([3.0, 5.0, 4.0], [6.0, 9.0, 7.0]), ([10.0, 12.0], [11.0, 15.0, 14.0])],
    [([40.0, 52.0, 47.0], [61.0, 58.0, 44.0]), ([1.0, 0.0, 1.0], [1.0, 1.0, 1.0]),
     ([220.0, 190.0, 205.0], [230.0, 260.0, 199.0])],
]

# Success counts (a successes of a_n, b successes of b_n), as in the published study.
FISHER_INPUTS = [(1, 3, 6, 6), (0, 3, 3, 6), (5, 12, 11, 12), (3, 3, 0, 3), (2, 9, 4, 7)]

# Bootstrap inputs: tasks of (condition, baseline).
BOOTSTRAP_INPUTS = [
    [([12.0, 15.0, 9.0, 22.0, 17.0, 13.0, 11.0, 30.0, 14.0, 16.0, 18.0, 10.0, 25.0, 21.0, 19.0],
      [28.0, 35.0, 26.0, 31.0, 40.0, 29.0, 33.0, 27.0, 38.0, 30.0, 36.0, 32.0, 45.0, 34.0, 37.0])],
    [([4.1, 5.3, 6.0, 3.9, 5.5, 4.8, 7.2, 5.1, 4.4, 6.6, 5.9],
      [6.2, 7.9, 5.8, 8.4, 7.1, 6.9, 9.3, 7.7, 6.5]),
     ([110.0, 95.0, 130.0, 101.0, 99.0, 120.0, 105.0, 117.0, 92.0],
      [140.0, 125.0, 150.0, 133.0, 128.0, 161.0, 137.0, 145.0, 131.0, 129.0, 142.0]),
     ([0.5, 0.9, 0.7, 1.1, 0.6, 0.8, 1.0, 0.4, 0.75],
      [2.3, 2.6, 2.5, 2.45, 2.35, 2.55, 2.65, 2.4, 2.5])],
]


def mean_diff(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def median_diff(x, y, axis=-1):
    return np.median(x, axis=axis) - np.median(y, axis=axis)


def permutation_cases():
    cases = []
    for x, y in PERMUTATION_INPUTS:
        for name, statistic in (("mean", mean_diff), ("median", median_diff)):
            for alternative in ALTERNATIVES:
                result = stats.permutation_test(
                    (x, y), statistic, permutation_type="independent",
                    alternative=alternative, n_resamples=np.inf, vectorized=True)
                cases.append({"x": x, "y": y, "statistic": name,
                              "alternative": alternative, "p": float(result.pvalue)})
    return cases


def stratified_p(strata, alternative):
    """Brute force: every combination of per-stratum relabellings, statistic the sum
    of per-stratum mean differences; p-values as scipy's permutation_test defines them."""
    per_stratum = []
    for x, y in strata:
        pooled = x + y
        values = []
        for chosen in itertools.combinations(range(len(pooled)), len(x)):
            first = [pooled[i] for i in chosen]
            second = [pooled[i] for i in range(len(pooled)) if i not in chosen]
            values.append(np.mean(first) - np.mean(second))
        per_stratum.append(values)
    null = np.array([sum(parts) for parts in itertools.product(*per_stratum)])
    observed = sum(np.mean(x) - np.mean(y) for x, y in strata)
    tolerance = 1e-9
    less = np.mean(null <= observed + tolerance)
    greater = np.mean(null >= observed - tolerance)
    if alternative == "less":
        return float(less)
    if alternative == "greater":
        return float(greater)
    return float(min(1.0, 2 * min(less, greater)))


def stratified_cases():
    return [{"strata": [{"condition": x, "baseline": y} for x, y in strata],
             "alternative": alternative, "p": stratified_p(strata, alternative)}
            for strata in STRATIFIED_INPUTS for alternative in ALTERNATIVES]


def fisher_cases():
    cases = []
    for a, a_n, b, b_n in FISHER_INPUTS:
        for alternative in ALTERNATIVES:
            result = stats.fisher_exact([[a, a_n - a], [b, b_n - b]], alternative=alternative)
            cases.append({"a": a, "a_n": a_n, "b": b, "b_n": b_n,
                          "alternative": alternative, "p": float(result.pvalue)})
    return cases


def across_tasks(*samples, axis=-1):
    diffs = [np.median(samples[i], axis=axis) - np.median(samples[i + 1], axis=axis)
             for i in range(0, len(samples), 2)]
    return np.median(np.stack(diffs), axis=0)


def bootstrap_cases():
    cases = []
    for tasks in BOOTSTRAP_INPUTS:
        samples = [s for task in tasks for s in task]
        per_task = []
        for x, y in tasks:
            result = stats.bootstrap((x, y), median_diff, method="percentile",
                                     n_resamples=10_000, vectorized=True,
                                     rng=np.random.default_rng(0))
            per_task.append([float(result.confidence_interval.low),
                             float(result.confidence_interval.high)])
        result = stats.bootstrap(samples, across_tasks, method="percentile",
                                 n_resamples=10_000, vectorized=True,
                                 rng=np.random.default_rng(0))
        cases.append({"tasks": [{"condition": x, "baseline": y} for x, y in tasks],
                      "per_task": per_task,
                      "across": [float(result.confidence_interval.low),
                                 float(result.confidence_interval.high)]})
    return cases


print(json.dumps({"permutation": permutation_cases(), "stratified": stratified_cases(),
                  "fisher": fisher_cases(), "bootstrap": bootstrap_cases()}))
