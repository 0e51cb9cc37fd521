"""Checks for requirement d04-month-end of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.month_end")
    return getattr(module, "month_end")


def test_leap_february():
    """Leap-year February ends on the 29th."""
    f = load()
    assert f("2024-02-10") == "2024-02-29"


def test_common_february():
    """Common-year February ends on the 28th."""
    f = load()
    assert f("2023-02-10") == "2023-02-28"


def test_december():
    """December ends on the 31st."""
    f = load()
    assert f("2024-12-01") == "2024-12-31"


def test_date_argument():
    """A datetime.date is accepted."""
    f = load()
    from datetime import date
    assert f(date(2024, 4, 2)) == "2024-04-30"
