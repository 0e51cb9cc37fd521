from datetime import date, timedelta


def is_overdue(due: str, today: str) -> bool:
    return date.fromisoformat(today) > date.fromisoformat(due)
