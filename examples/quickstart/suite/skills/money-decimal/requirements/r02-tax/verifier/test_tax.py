"""Checks for requirement r02-tax of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.tax")
    return getattr(module, "add_tax")


def test_round_rate():
    """A 20% tax on 100.00 gives 120.00."""
    f = load()
    assert f("100.00", "20") == "120.00"


def test_half_cent_small_amount():
    """2.625 rounds up to 2.63."""
    f = load()
    assert f("2.50", "5") == "2.63"


def test_fractional_rate():
    """8.25% on 10.00 is 10.825, which rounds up to 10.83."""
    f = load()
    assert f("10.00", "8.25") == "10.83"


def test_fifteen_percent():
    """15% on 3.30 is 3.795, which rounds up to 3.80."""
    f = load()
    assert f("3.30", "15") == "3.80"
