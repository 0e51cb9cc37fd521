from datetime import date, timedelta


def next_business_day(day):
    result = date.fromisoformat(day) + timedelta(days=1)
    if result.weekday() == 5:
        result += timedelta(days=2)
    return result.isoformat()
