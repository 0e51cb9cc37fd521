from datetime import date, timedelta


def due_date(issued: str, net_days: int) -> str:
    if net_days < 0:
        raise ValueError("net_days must not be negative")
    return (date.fromisoformat(issued) + timedelta(days=net_days)).isoformat()
