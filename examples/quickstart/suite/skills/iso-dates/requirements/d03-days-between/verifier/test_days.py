"""Checks for requirement d03-days-between of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.days")
    return getattr(module, "days_between")


def test_same_day():
    """The same day is zero days."""
    f = load()
    assert f("2024-05-05", "2024-05-05") == 0


def test_leap_february():
    """January and a leap February are 60 days."""
    f = load()
    assert f("2024-01-01", "2024-03-01") == 60


def test_reversed():
    """An earlier end gives a negative count."""
    f = load()
    assert f("2024-01-10", "2024-01-01") == -9


def test_full_year():
    """2023 has 365 days."""
    f = load()
    assert f("2023-01-01", "2024-01-01") == 365
