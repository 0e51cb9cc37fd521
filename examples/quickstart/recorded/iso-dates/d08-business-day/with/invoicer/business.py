from datetime import date, timedelta


def next_business_day(day: str) -> str:
    result = date.fromisoformat(day) + timedelta(days=1)
    while result.weekday() >= 5:
        result += timedelta(days=1)
    return result.isoformat()
