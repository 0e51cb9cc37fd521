"""Checks for requirement r01-line-total of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.totals")
    return getattr(module, "line_total")


def test_whole_quantities():
    """Three items at 19.99 cost 59.97."""
    f = load()
    assert f(3, "19.99") == "59.97"


def test_zero_quantity():
    """A zero quantity costs nothing, written with two decimals."""
    f = load()
    assert f(0, "5.00") == "0.00"


def test_half_cent_rounds_up():
    """A price with a half cent rounds up to the next cent."""
    f = load()
    assert f(1, "2.675") == "2.68"


def test_product_with_half_cent():
    """A product ending in half a cent rounds up."""
    f = load()
    assert f(5, "0.125") == "0.63"
