from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def sum_amounts(amounts: list[str]) -> str:
    total = sum((Decimal(amount) for amount in amounts), Decimal(0))
    return str(total.quantize(CENT, rounding=ROUND_HALF_UP))
