from datetime import date, timedelta


def is_overdue(due, today):
    return date.fromisoformat(today) > date.fromisoformat(due)
