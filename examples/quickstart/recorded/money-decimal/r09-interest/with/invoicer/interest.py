from decimal import ROUND_HALF_UP, Decimal

CENT = Decimal("0.01")


def simple_interest(principal: str, annual_rate_percent: str, days: int) -> str:
    if days < 0:
        raise ValueError("days must not be negative")
    interest = Decimal(principal) * Decimal(annual_rate_percent) / 100 * Decimal(days) / 365
    return str(interest.quantize(CENT, rounding=ROUND_HALF_UP))
