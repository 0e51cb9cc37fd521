from decimal import Decimal


def split_evenly(amount: str, parts: int) -> list[str]:
    if parts < 1:
        raise ValueError("parts must be at least 1")
    cents = int(Decimal(amount) * 100)
    base, extra = divmod(cents, parts)
    shares = [base + 1] * extra + [base] * (parts - extra)
    return [f"{share // 100}.{share % 100:02d}" for share in shares]
