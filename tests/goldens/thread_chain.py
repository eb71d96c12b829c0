import requests


def fetch_user(user_id):
    return requests.get(f"http://users/{user_id}")


def load_profile(user_id):
    user = fetch_user(user_id)
    return {"user": user}


def build_page(user_id):
    return render(load_profile(user_id))


def render(profile):
    return str(profile)


def handler(request, budget):
    return build_page(request.user_id)


def batch(user_ids, budget):
    return [build_page(user_id) for user_id in user_ids]
