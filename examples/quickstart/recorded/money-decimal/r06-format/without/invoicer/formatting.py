def format_amount(amount):
    return f"{float(amount):,.2f}"
