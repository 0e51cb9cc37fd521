"""Checks for requirement d06-quarter of the iso-dates quickstart skill.

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
    module = importlib.import_module("invoicer.quarter")
    return getattr(module, "quarter_of")


def test_january():
    """January is in Q1."""
    f = load()
    assert f("2024-01-01") == "2024-Q1"


def test_end_of_june():
    """30 June is the end of Q2."""
    f = load()
    assert f("2024-06-30") == "2024-Q2"


def test_start_of_july():
    """1 July starts Q3."""
    f = load()
    assert f("2024-07-01") == "2024-Q3"


def test_new_years_eve():
    """31 December is in Q4."""
    f = load()
    assert f("2023-12-31") == "2023-Q4"
