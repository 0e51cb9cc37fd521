from datetime import date, timedelta


def days_between(start, end):
    return (date.fromisoformat(end) - date.fromisoformat(start)).days
