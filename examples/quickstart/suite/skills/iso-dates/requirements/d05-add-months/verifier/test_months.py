"""Checks for requirement d05-add-months of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.months")
    return getattr(module, "add_months")


def test_plain():
    """The same day next month."""
    f = load()
    assert f("2024-01-15", 1) == "2024-02-15"


def test_clamped_leap():
    """31 January plus a month is 29 February in a leap year."""
    f = load()
    assert f("2024-01-31", 1) == "2024-02-29"


def test_across_year():
    """Months carry into the next year."""
    f = load()
    assert f("2024-11-15", 3) == "2025-02-15"


def test_backwards_clamped():
    """Negative months clamp too."""
    f = load()
    assert f("2023-03-31", -1) == "2023-02-28"
