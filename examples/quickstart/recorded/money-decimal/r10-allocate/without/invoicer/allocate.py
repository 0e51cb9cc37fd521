def allocate(amount, weights):
    total = sum(weights)
    return [f"{float(amount) * weight / total:.2f}" for weight in weights]
