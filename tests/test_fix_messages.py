"""What a fix writes names what the code already has: the local a budget was read into
(DL503), the budget type's own hop-timeout method (DL104)."""
from __future__ import annotations

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text

FORWARDING = '''\
import requests


def load(user_id, budget=None):
    return requests.get("http://x/", timeout=budget.timeout())


def fetch(url, *, budget_s: float = 10.0):
    return requests.get(url, timeout=max(0.001, budget_s - 0.05))


def handler(request):
    budget = request.state.budget
    requests.get("http://y/", timeout=budget.timeout())
    fetch(request.url)
    return load(request.user_id)


def read_late(request):
    load(request.user_id)
    budget = request.state.budget
    return budget


def read_in_a_branch(request, fresh):
    if fresh:
        budget = request.state.budget
        requests.get("http://y/", timeout=budget.timeout())
    return load(request.user_id)
'''


def _messages(text: str, code: str):
    return [(d.line, d.message) for d in Checker(select=[code]).check_text(text, "m.py") if d.code == code]


def test_dl503_passes_the_local_the_budget_was_read_into() -> None:
    found = dict(_messages(FORWARDING, "DL503"))
    assert found[15].endswith("pass `budget_s=budget.timeout()`")
    assert found[16].endswith("pass `budget=budget`")
    # The local is bound after the call, or only in a branch: the source itself is passed.
    assert found[20].endswith("pass `budget=request.state.budget`")
    assert found[29].endswith("pass `budget=request.state.budget`")
    fixed = fix_text(Checker(select=["DL503"]), FORWARDING, "m.py", FixMode(unsafe=True)).text
    assert "    return load(request.user_id, budget=budget)\n" in fixed


REMAINDER = '''\
import requests
import stock_pb2_grpc


def handler(request, budget, context):
    requests.get("http://a/", timeout=request.state.budget.remaining())
    requests.get("http://b/", timeout=budget.remaining())
    requests.get("http://c/", timeout=max(0.0, budget.remaining()))


class Orders(stock_pb2_grpc.OrdersServicer):
    def GetOrder(self, request, context):
        return requests.get("http://d/", timeout=context.time_remaining())
'''


def test_dl104_uses_the_budget_types_hop_timeout_method_where_it_has_one() -> None:
    found = dict(_messages(REMAINDER, "DL104"))
    assert found[6].endswith("use the hop timeout (`request.state.budget.timeout()`)")
    assert found[7].endswith("use the hop timeout (`budget.timeout()`)")
    assert found[8].endswith("use the hop timeout (`budget.timeout()`)")
    # gRPC's context has no hop-timeout method: the margin is subtracted, and its remainder is
    # None when the client set no deadline, so the edge total stands in for it.
    guarded = "(10.0 if context.time_remaining() is None else context.time_remaining())"
    assert found[13].endswith(f"subtract the hop margin (`max(0.001, {guarded} - 0.05)`)")
    fixed = fix_text(Checker(select=["DL104"]), REMAINDER, "m.py", FixMode(unsafe=True)).text
    assert 'timeout=request.state.budget.timeout())' in fixed
    assert 'timeout=max(0.0, budget.timeout()))' in fixed


READ_INTO_A_LOCAL = '''\
import requests


def fixed(request):
    budget = request.state.budget
    return requests.get("http://x/", timeout=30)


def missing(request):
    budget = request.state.budget
    return requests.get("http://x/")


def read_late(request):
    requests.get("http://x/")
    budget = request.state.budget
    return budget
'''


def test_dl101_and_dl102_spell_the_budget_by_the_local_it_was_read_into() -> None:
    assert _messages(READ_INTO_A_LOCAL, "DL102")[0][1].endswith("pass `min(30, budget.timeout())`")
    dl101 = dict(_messages(READ_INTO_A_LOCAL, "DL101"))
    assert dl101[11].endswith("pass `timeout=budget.timeout()` from the budget in scope")
    # Read after the call: the source itself, as before.
    assert dl101[15].endswith("pass `timeout=request.state.budget.timeout()` from the budget in scope")
    fixed = fix_text(Checker(select=["DL101", "DL102"]), READ_INTO_A_LOCAL, "m.py", FixMode(unsafe=True)).text
    assert 'requests.get("http://x/", timeout=min(30, budget.timeout()))' in fixed
    assert 'requests.get("http://x/", timeout=budget.timeout())' in fixed
