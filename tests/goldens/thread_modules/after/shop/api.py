from shop import service
import time


def handler(request, budget):
    return service.load_profile(request.user_id, budget_s=budget.timeout())


def batch(user_ids, *, budget_s: float = 10.0):
    budget_deadline_s = time.monotonic() + budget_s
    return [service.load_profile(user_id, budget_s=max(0.001, (budget_deadline_s - time.monotonic()) - 0.05)) for user_id in user_ids]
