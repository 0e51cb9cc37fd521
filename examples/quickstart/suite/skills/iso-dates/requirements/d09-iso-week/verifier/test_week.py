"""Checks for requirement d09-iso-week of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.week")
    return getattr(module, "iso_week")


def test_first_week():
    """1 January 2024 is a Monday in week 1."""
    f = load()
    assert f("2024-01-01") == "2024-W01"


def test_previous_iso_year():
    """3 January 2021 belongs to 2020's week 53."""
    f = load()
    assert f("2021-01-03") == "2020-W53"


def test_next_iso_year():
    """30 December 2024 belongs to 2025's week 1."""
    f = load()
    assert f("2024-12-30") == "2025-W01"


def test_mid_year():
    """15 June 2024 is in week 24."""
    f = load()
    assert f("2024-06-15") == "2024-W24"
