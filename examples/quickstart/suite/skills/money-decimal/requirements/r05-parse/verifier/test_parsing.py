"""Checks for requirement r05-parse of the money-decimal quickstart skill.

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
    module = importlib.import_module("invoicer.parsing")
    return getattr(module, "parse_amount")


def test_dollar_and_separators():
    """Currency sign and thousands separators are removed."""
    f = load()
    assert f("$1,234.50") == "1234.50"


def test_whole_number():
    """A whole number gets two decimals."""
    f = load()
    assert f("12") == "12.00"


def test_negative():
    """A negative amount keeps its sign."""
    f = load()
    assert f("-3.5") == "-3.50"


def test_not_an_amount():
    """Text that is not a number is rejected."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("abc")
