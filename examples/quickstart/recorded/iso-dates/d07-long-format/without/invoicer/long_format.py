from datetime import date

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def format_long(day):
    parsed = date.fromisoformat(day)
    return f"{parsed.day} {MONTHS[parsed.month - 1]} {parsed.year}"
