def convert(amount, rate):
    return f"{float(amount) * float(rate):.2f}"
