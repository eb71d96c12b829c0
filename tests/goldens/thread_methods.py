import requests


class Repository:
    def load(self, key):
        return requests.get(f"http://store/{key}")

    def load_many(self, keys):
        return [self.load(key) for key in keys]


class CachedRepository(Repository):
    def load(self, key):
        return {"cached": key}


REPOSITORY = Repository()


def handler(request, budget):
    return REPOSITORY.load_many(request.keys)
