"""Checks for requirement r10-allocate of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.allocate")
    return getattr(module, "allocate")


def test_equal_weights():
    """Equal weights: the leftover cent goes first."""
    f = load()
    assert f("100.00", [1, 1, 1]) == ["33.34", "33.33", "33.33"]


def test_shares_add_up():
    """Weighted shares add up to the amount."""
    f = load()
    from decimal import Decimal
    shares = f("10.00", [1, 2, 3, 4])
    assert [Decimal(s) for s in shares] == [Decimal("1.00"), Decimal("2.00"), Decimal("3.00"), Decimal("4.00")]


def test_odd_cents():
    """Five cents in two equal parts: 3 and 2."""
    f = load()
    assert f("0.05", [1, 1]) == ["0.03", "0.02"]


def test_zero_weights():
    """All-zero weights are an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("1.00", [0, 0])
