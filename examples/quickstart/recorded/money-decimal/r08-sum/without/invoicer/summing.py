def sum_amounts(amounts):
    return f"{sum(float(amount) for amount in amounts):.2f}"
