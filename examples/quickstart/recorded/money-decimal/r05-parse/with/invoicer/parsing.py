from decimal import Decimal, InvalidOperation


def parse_amount(text: str) -> str:
    cleaned = text.strip().lstrip("$").replace(",", "")
    try:
        value = Decimal(cleaned)
    except InvalidOperation as error:
        raise ValueError(f"not an amount: {text!r}") from error
    return str(value.quantize(Decimal("0.01")))
