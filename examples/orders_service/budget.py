"""The service's budget object: remaining time on a monotonic clock."""
import time

HOP_MARGIN_S = 0.05


class Budget:
    def __init__(self, remaining_s: float) -> None:
        self._expires_at = time.monotonic() + remaining_s

    def remaining(self) -> float:
        return max(0.0, self._expires_at - time.monotonic())

    def timeout(self) -> float:
        """What a downstream call may wait: the remainder minus the hop margin."""
        return max(0.0, self.remaining() - HOP_MARGIN_S)
