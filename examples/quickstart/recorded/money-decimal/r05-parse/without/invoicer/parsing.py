def parse_amount(text):
    return f"{float(text.strip().lstrip('$').replace(',', '')):.2f}"
