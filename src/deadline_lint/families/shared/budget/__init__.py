"""The budget in scope: which names carry the request's remaining time, where it comes from, and
which calls it is forwarded to."""
