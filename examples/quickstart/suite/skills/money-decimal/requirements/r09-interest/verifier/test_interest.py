"""Checks for requirement r09-interest of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.interest")
    return getattr(module, "simple_interest")


def test_full_year():
    """A year of 5% on 1000.00 is 50.00."""
    f = load()
    assert f("1000.00", "5", 365) == "50.00"


def test_thirty_days():
    """30 days at 3.65% on 1000.00 is 3.00."""
    f = load()
    assert f("1000.00", "3.65", 30) == "3.00"


def test_one_day():
    """One day at 5% on 730.00 is 0.10."""
    f = load()
    assert f("730.00", "5", 1) == "0.10"


def test_negative_days():
    """Negative days are an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("100.00", "5", -1)
