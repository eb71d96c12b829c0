"""The profile's fix templates reach every fix: a customised `fix.seconds_expression` shapes
what each rule inserts, the hop margin included (DL104's fix built its own `max(...)`)."""
from __future__ import annotations

from deadline_lint.engine.checker import Checker
from deadline_lint.fixes.loop import FixMode, fix_text
from deadline_lint.settings.profile import build_profile

CUSTOM = {"hop_margin_ms": 20, "fix": {"seconds_expression": "acme.floor({budget} - {margin})"}}


def fixed(text: str, overrides, select) -> str:
    checker = Checker(build_profile(overrides, "p.yaml"), select=select)
    return fix_text(checker, text, "svc.py", FixMode(unsafe=True)).text


GRPC = """import grpc
from shop.protos import stock_pb2_grpc


class Stock(stock_pb2_grpc.StockServicer):
    def Reserve(self, request, context):
        return self.stub.Hold(request, timeout=context.time_remaining())
"""


def test_dl104_fix_follows_a_customised_seconds_template() -> None:
    out = fixed(GRPC, CUSTOM, ["DL104"])
    # gRPC's `time_remaining()` is None when the client set no deadline: the edge total stands in.
    guarded = "(10.0 if context.time_remaining() is None else context.time_remaining())"
    assert f"timeout=acme.floor({guarded} - 0.02))" in out, out


def test_dl104_fix_with_the_default_template_is_unchanged() -> None:
    out = fixed(GRPC, {"hop_margin_ms": 20}, ["DL104"])
    guarded = "(10.0 if context.time_remaining() is None else context.time_remaining())"
    assert f"timeout=max(0.001, {guarded} - 0.02))" in out, out


def test_dl104_inside_a_clamp_only_takes_the_margin_off() -> None:
    text = GRPC.replace("timeout=context.time_remaining()", "timeout=max(0.0, context.time_remaining())")
    out = fixed(text, CUSTOM, ["DL104"])
    assert "timeout=max(0.0, context.time_remaining() - 0.02))" in out, out


def test_budget_fixes_follow_a_customised_seconds_template() -> None:
    text = "import requests\n\ndef f(url, budget_s):\n    return requests.get(url)\n"
    out = fixed(text, CUSTOM, ["DL101"])
    assert "requests.get(url, timeout=acme.floor(budget_s - 0.02))" in out, out
