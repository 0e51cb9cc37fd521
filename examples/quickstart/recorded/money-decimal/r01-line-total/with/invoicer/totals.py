from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def line_total(quantity: int, unit_price: str) -> str:
    total = Decimal(quantity) * Decimal(unit_price)
    return str(total.quantize(CENT, rounding=ROUND_HALF_UP))
