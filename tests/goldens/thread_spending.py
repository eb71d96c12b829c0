import requests


def fetch_user(user_id):
    return requests.get(f"http://users/{user_id}")


def fetch_orders(user_id):
    requests.get(f"http://orders/{user_id}/warm")
    return requests.get(f"http://orders/{user_id}")


def load_profile(user_id):
    requests.get(f"http://audit/{user_id}")
    return {"user": fetch_user(user_id), "orders": fetch_orders(user_id)}


def batch(user_ids):
    return [load_profile(user_id) for user_id in user_ids]


def handler(request, budget):
    return batch(request.user_ids)
