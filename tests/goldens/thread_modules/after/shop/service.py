from shop.clients import fetch_orders, fetch_user
import time


def load_profile(user_id, *, budget_s: float):
    budget_deadline_s = time.monotonic() + budget_s
    user = fetch_user(user_id, budget_s=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05))
    orders = fetch_orders(user_id, budget_s=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05))
    return {"user": user, "orders": orders}
