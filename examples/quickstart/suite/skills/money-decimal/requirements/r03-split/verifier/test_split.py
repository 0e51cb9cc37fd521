"""Checks for requirement r03-split of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.split")
    return getattr(module, "split_evenly")


def test_even_amount():
    """An amount that divides evenly gives equal shares."""
    f = load()
    assert f("10.00", 2) == ["5.00", "5.00"]


def test_remainder_goes_first():
    """The leftover cent goes to the first share."""
    f = load()
    assert f("10.00", 3) == ["3.34", "3.33", "3.33"]


def test_shares_add_up():
    """Seven shares of 100.00 add up to exactly 100.00."""
    f = load()
    from decimal import Decimal
    shares = f("100.00", 7)
    assert len(shares) == 7
    assert sum(Decimal(s) for s in shares) == Decimal("100.00")


def test_zero_parts_rejected():
    """Zero parts is an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("1.00", 0)
