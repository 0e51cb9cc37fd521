from datetime import date


def quarter_of(day):
    parsed = date.fromisoformat(day)
    return f"{parsed.year}-Q{(parsed.month - 1) // 3 + 1}"
