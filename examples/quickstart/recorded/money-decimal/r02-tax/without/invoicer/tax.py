def add_tax(amount, rate_percent):
    return f"{float(amount) * (1 + float(rate_percent) / 100):.2f}"
