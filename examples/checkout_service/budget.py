"""The request budget: what is left of the caller's deadline, on this process's monotonic clock."""
import time

HOP_MARGIN_S = 0.05
EDGE_TOTAL_MS = 10_000


class Budget:
    def __init__(self, seconds: float) -> None:
        self._expires_at = time.monotonic() + seconds

    def remaining(self) -> float:
        """The raw remainder: forwarding it as is leaves this hop no time to answer."""
        return max(0.0, self._expires_at - time.monotonic())

    def timeout(self) -> float:
        """What a downstream call may wait: the remainder minus the hop margin, never below 1 ms."""
        return max(0.001, self.remaining() - HOP_MARGIN_S)

    def expired(self) -> bool:
        return self.remaining() <= HOP_MARGIN_S

    def header_value(self) -> str:
        """The remaining duration for the next hop's `X-Request-Budget-Ms`."""
        return str(int(self.timeout() * 1000))


class LeaseTimer:
    """How long a reservation lease has left (the batch jobs' older helper)."""

    def __init__(self, ttl_s: float) -> None:
        # Bug: a deadline on the wall clock jumps with NTP; the Budget above uses monotonic().
        self.expires_at = time.time() + ttl_s

    def left(self) -> float:
        return self.expires_at - time.time()
