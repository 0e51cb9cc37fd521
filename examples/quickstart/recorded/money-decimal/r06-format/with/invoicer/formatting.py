from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def format_amount(amount: str) -> str:
    value = Decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)
    return f"{value:,.2f}"
