def split_evenly(amount, parts):
    if parts < 1:
        raise ValueError("parts must be at least 1")
    share = round(float(amount) / parts, 2)
    return [f"{share:.2f}"] * parts
