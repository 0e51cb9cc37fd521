from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def convert(amount: str, rate: str) -> str:
    converted = Decimal(amount) * Decimal(rate)
    return str(converted.quantize(CENT, rounding=ROUND_HALF_UP))
