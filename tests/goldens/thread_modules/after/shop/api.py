from shop import service


def handler(request, budget):
    return service.load_profile(request.user_id, budget_s=budget.timeout())


def batch(user_ids, budget):
    return [service.load_profile(user_id, budget_s=budget.timeout()) for user_id in user_ids]
