from datetime import date


def add_months(day, months):
    parsed = date.fromisoformat(day)
    index = parsed.year * 12 + parsed.month - 1 + months
    year, month = divmod(index, 12)
    for candidate in (parsed.day, 30, 28):
        try:
            return date(year, month + 1, candidate).isoformat()
        except ValueError:
            continue
    raise ValueError(day)
