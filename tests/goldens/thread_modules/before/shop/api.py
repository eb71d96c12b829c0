from shop import service


def handler(request, budget):
    return service.load_profile(request.user_id)


def batch(user_ids, budget):
    return [service.load_profile(user_id) for user_id in user_ids]
