from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def apply_discount(amount: str, percent: str) -> str:
    net = Decimal(amount) * (1 - Decimal(percent) / 100)
    return str(net.quantize(CENT, rounding=ROUND_HALF_UP))
