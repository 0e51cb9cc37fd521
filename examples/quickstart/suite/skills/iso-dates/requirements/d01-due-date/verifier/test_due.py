"""Checks for requirement d01-due-date of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.due")
    return getattr(module, "due_date")


def test_thirty_days():
    """Net 30 from 15 January."""
    f = load()
    assert f("2024-01-15", 30) == "2024-02-14"


def test_leap_year():
    """February 2024 has 29 days."""
    f = load()
    assert f("2024-02-20", 10) == "2024-03-01"


def test_year_end():
    """Crossing into the next year."""
    f = load()
    assert f("2023-12-25", 7) == "2024-01-01"


def test_negative_days():
    """Negative net days are an error."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("2024-01-15", -1)
