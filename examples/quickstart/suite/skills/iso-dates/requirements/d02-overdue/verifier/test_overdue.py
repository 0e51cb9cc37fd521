"""Checks for requirement d02-overdue of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.overdue")
    return getattr(module, "is_overdue")


def test_due_yesterday():
    """Past the due date is overdue."""
    f = load()
    assert f("2024-03-04", "2024-03-05") is True


def test_due_today():
    """The due date itself is not overdue."""
    f = load()
    assert f("2024-03-05", "2024-03-05") is False


def test_due_tomorrow():
    """Before the due date is not overdue."""
    f = load()
    assert f("2024-03-06", "2024-03-05") is False


def test_across_years():
    """Compared as dates, not as text of different shapes."""
    f = load()
    assert f("2023-12-31", "2024-01-01") is True
