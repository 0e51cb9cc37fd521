def apply_discount(amount, percent):
    return f"{float(amount) * (1 - float(percent) / 100):.2f}"
