from shop.clients import fetch_orders, fetch_user


def load_profile(user_id):
    user = fetch_user(user_id)
    orders = fetch_orders(user_id)
    return {"user": user, "orders": orders}
