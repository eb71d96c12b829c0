"""A gRPC front for catalogue search that fans out over HTTP (deliberate bugs marked)."""
import aiohttp
import httpx

from orders_service import search_pb2, search_pb2_grpc

RANKER = "http://ranker.internal"
PRICES = "http://prices.internal"


class Search(search_pb2_grpc.SearchServicer):
    def Query(self, request, context):
        remaining = context.time_remaining()
        # Bug: the raw remainder goes on with no hop margin subtracted.
        ranked = httpx.post(f"{RANKER}/rank", json={"q": request.q}, timeout=remaining)
        # Bug: the same remainder, read once, is spent again on a second sequential call.
        prices = httpx.get(f"{PRICES}/batch", params={"ids": ranked.text}, timeout=remaining)
        return search_pb2.Reply(body=prices.text)

    def Suggest(self, request, context):
        # Bug: a fixed local timeout ignores the caller's budget (it may be far less than 2 s).
        return httpx.get(f"{RANKER}/suggest", params={"q": request.q}, timeout=2.0)

    def Related(self, request, context):
        # Bug: max() lets this hop take more time than the caller has left.
        timeout = max(context.time_remaining() - 0.05, 1.0)
        return httpx.get(f"{RANKER}/related", params={"q": request.q}, timeout=timeout)

    def Healthy(self, request, context):
        # Correct: what is left, minus the hop margin, never below zero.
        timeout = max(0.0, context.time_remaining() - 0.05)
        return httpx.get(f"{RANKER}/health", timeout=timeout)


async def warm_cache(keys):
    # Bug: aiohttp's default is 300 s, far beyond any request budget.
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{PRICES}/warm", params={"keys": ",".join(keys)}) as response:
            return await response.json()
