import requests


def fetch_user(user_id):
    return requests.get(f"http://users/{user_id}")


def fetch_orders(user_id):
    return requests.get(f"http://orders/{user_id}")
