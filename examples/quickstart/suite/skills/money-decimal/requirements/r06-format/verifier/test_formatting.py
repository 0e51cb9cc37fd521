"""Checks for requirement r06-format of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.formatting")
    return getattr(module, "format_amount")


def test_thousands():
    """Thousands get a separator."""
    f = load()
    assert f("1234.5") == "1,234.50"


def test_zero():
    """Zero prints as 0.00."""
    f = load()
    assert f("0") == "0.00"


def test_negative_millions():
    """Negative millions keep their sign and separators."""
    f = load()
    assert f("-1234567.891") == "-1,234,567.89"


def test_half_cent():
    """A half cent rounds up."""
    f = load()
    assert f("2.675") == "2.68"
