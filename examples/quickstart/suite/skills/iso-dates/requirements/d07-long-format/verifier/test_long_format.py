"""Checks for requirement d07-long-format of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.long_format")
    return getattr(module, "format_long")


def test_no_leading_zero():
    """Single-digit days have no leading zero."""
    f = load()
    assert f("2024-03-05") == "5 March 2024"


def test_december():
    """December is spelled out."""
    f = load()
    assert f("2024-12-25") == "25 December 2024"


def test_new_year():
    """1 January."""
    f = load()
    assert f("2024-01-01") == "1 January 2024"


def test_invalid():
    """An impossible date is an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("2024-13-01")
