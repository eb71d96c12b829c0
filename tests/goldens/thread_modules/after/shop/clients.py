import requests


def fetch_user(user_id, *, budget_s: float):
    return requests.get(f"http://users/{user_id}", timeout=max(0.001, budget_s - 0.05))


def fetch_orders(user_id, *, budget_s: float):
    return requests.get(f"http://orders/{user_id}", timeout=max(0.001, budget_s - 0.05))
