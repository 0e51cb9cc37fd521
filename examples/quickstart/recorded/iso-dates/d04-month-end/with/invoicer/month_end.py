import calendar
from datetime import date


def month_end(day):
    parsed = date.fromisoformat(day)
    last = calendar.monthrange(parsed.year, parsed.month)[1]
    return parsed.replace(day=last).isoformat()
