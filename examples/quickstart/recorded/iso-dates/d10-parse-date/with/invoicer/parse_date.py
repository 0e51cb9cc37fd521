import re
from datetime import date, datetime


def parse_date(text: str) -> str:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return date.fromisoformat(text).isoformat()
    if re.fullmatch(r"\d{2}/\d{2}/\d{4}", text):
        return datetime.strptime(text, "%d/%m/%Y").date().isoformat()
    raise ValueError(f"unrecognised date: {text!r}")
