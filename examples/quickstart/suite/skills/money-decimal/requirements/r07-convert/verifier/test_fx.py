"""Checks for requirement r07-convert of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.fx")
    return getattr(module, "convert")


def test_plain_rate():
    """100.00 at 1.0825 is 108.25."""
    f = load()
    assert f("100.00", "1.0825") == "108.25"


def test_half_cent_result():
    """1.00 at 0.125 is 0.125, which rounds up to 0.13."""
    f = load()
    assert f("1.00", "0.125") == "0.13"


def test_half_cent_above_one():
    """2.00 at 1.0025 is 2.005, which rounds up to 2.01."""
    f = load()
    assert f("2.00", "1.0025") == "2.01"


def test_negative_rate_rejected():
    """A negative rate is an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("5.00", "-1")
