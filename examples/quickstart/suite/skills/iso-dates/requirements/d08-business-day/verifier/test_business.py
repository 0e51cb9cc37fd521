"""Checks for requirement d08-business-day of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.business")
    return getattr(module, "next_business_day")


def test_monday():
    """After a Monday comes Tuesday."""
    f = load()
    assert f("2024-03-04") == "2024-03-05"


def test_friday():
    """After a Friday comes Monday."""
    f = load()
    assert f("2024-03-08") == "2024-03-11"


def test_saturday():
    """After a Saturday comes Monday."""
    f = load()
    assert f("2024-03-09") == "2024-03-11"


def test_sunday():
    """After a Sunday comes Monday."""
    f = load()
    assert f("2024-03-10") == "2024-03-11"
