"""Checks for requirement r04-discount of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.discount")
    return getattr(module, "apply_discount")


def test_ten_percent():
    """10% off 19.99 is 17.991, shown as 17.99."""
    f = load()
    assert f("19.99", "10") == "17.99"


def test_half_of_odd_cents():
    """Half of 0.35 is 0.175, which rounds up to 0.18."""
    f = load()
    assert f("0.35", "50") == "0.18"


def test_ten_percent_half_cent():
    """10% off 1.15 is 1.035, which rounds up to 1.04."""
    f = load()
    assert f("1.15", "10") == "1.04"


def test_half_price():
    """Half of 10.05 is 5.025, which rounds up to 5.03."""
    f = load()
    assert f("10.05", "50") == "5.03"
