"""Checks for requirement d10-parse-date of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.parse_date")
    return getattr(module, "parse_date")


def test_iso():
    """ISO input is kept."""
    f = load()
    assert f("2024-03-05") == "2024-03-05"


def test_day_month_year():
    """Day/month/year with slashes."""
    f = load()
    assert f("05/03/2024") == "2024-03-05"


def test_compact():
    """Compact year-month-day."""
    f = load()
    assert f("20240305") == "2024-03-05"


def test_words_rejected():
    """Words are rejected."""
    f = load()
    import pytest
    with pytest.raises(ValueError):
        f("March 5")
