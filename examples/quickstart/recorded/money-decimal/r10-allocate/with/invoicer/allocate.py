from decimal import Decimal


def allocate(amount: str, weights: list[int]) -> list[str]:
    cents = int(Decimal(amount) * 100)
    total = sum(weights)
    exact = [cents * weight / total for weight in weights]
    shares = [int(value) for value in exact]
    leftover = cents - sum(shares)
    order = sorted(range(len(weights)), key=lambda index: (-(exact[index] - shares[index]), index))
    for index in order[:leftover]:
        shares[index] += 1
    return [f"{share // 100}.{share % 100:02d}" for share in shares]
