"""The generated gRPC client for the inventory service (trimmed to what the example calls)."""


class InventoryStub:
    def __init__(self, channel):
        self.Reserve = channel.unary_unary("/inventory.Inventory/Reserve")
        self.Release = channel.unary_unary("/inventory.Inventory/Release")
