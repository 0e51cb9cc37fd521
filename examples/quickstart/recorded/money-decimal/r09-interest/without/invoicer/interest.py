def simple_interest(principal, annual_rate_percent, days):
    if days < 0:
        raise ValueError("days must not be negative")
    return f"{float(principal) * float(annual_rate_percent) / 100 * days / 365:.2f}"
