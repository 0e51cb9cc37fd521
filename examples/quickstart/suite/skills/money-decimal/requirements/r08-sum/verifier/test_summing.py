"""Checks for requirement r08-sum of the money-decimal quickstart skill.

Each check imports the produced module and calls it, so a missing or broken module fails every
check instead of stopping collection.
"""

import importlib
import os
import sys

WORKSPACE = os.environ.get("SKILLSMITH_WORKSPACE", "/workspace/invoicer")
if WORKSPACE not in sys.path:
    sys.path.insert(0, WORKSPACE)


def load():
    module = importlib.import_module("invoicer.summing")
    return getattr(module, "sum_amounts")


def test_tenths():
    """0.10 three times is 0.30."""
    f = load()
    assert f(["0.10", "0.10", "0.10"]) == "0.30"


def test_half_cent_single():
    """1.005 rounds up to 1.01."""
    f = load()
    assert f(["1.005"]) == "1.01"


def test_half_cent_sum():
    """0.125 + 0.5 = 0.625 rounds up to 0.63."""
    f = load()
    assert f(["0.125", "0.5"]) == "0.63"


def test_empty():
    """Nothing sums to 0.00."""
    f = load()
    assert f([]) == "0.00"
