from datetime import date, timedelta


def due_date(issued, net_days):
    return (date.fromisoformat(issued) + timedelta(days=net_days)).isoformat()
