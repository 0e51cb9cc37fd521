"""Line items of an invoice."""

from dataclasses import dataclass


@dataclass(frozen=True)
class LineItem:
    """One line of an invoice: what was sold, how many, and the price of one (a decimal string)."""

    description: str
    quantity: int
    unit_price: str
