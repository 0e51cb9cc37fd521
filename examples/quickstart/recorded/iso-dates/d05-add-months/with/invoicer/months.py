import calendar
from datetime import date


def add_months(day: str, months: int) -> str:
    parsed = date.fromisoformat(day)
    year, month = divmod(parsed.year * 12 + parsed.month - 1 + months, 12)
    month += 1
    last = calendar.monthrange(year, month)[1]
    return date(year, month, min(parsed.day, last)).isoformat()
