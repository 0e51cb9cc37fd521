"""Small helpers for writing invoices."""

__version__ = "0.1.0"
