from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def add_tax(amount: str, rate_percent: str) -> str:
    gross = Decimal(amount) * (1 + Decimal(rate_percent) / 100)
    return str(gross.quantize(CENT, rounding=ROUND_HALF_UP))
