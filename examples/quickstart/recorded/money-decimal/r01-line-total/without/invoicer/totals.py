def line_total(quantity, unit_price):
    return f"{quantity * float(unit_price):.2f}"
