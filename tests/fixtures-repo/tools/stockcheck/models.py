"""Plain data types shared by every other module."""

from dataclasses import dataclass
from enum import Enum


class StockLevel(Enum):
    """How an item's quantity compares with its reorder threshold."""

    OUT = "out"
    LOW = "low"
    OK = "ok"


@dataclass(frozen=True)
class Item:
    """One stock line: what the shop holds of a SKU and what one unit costs."""

    sku: str
    name: str
    quantity: int
    unit_cents: int

    def value_cents(self) -> int:
        """Value of the stock held, in cents."""
        return self.quantity * self.unit_cents

    def level(self, threshold: int) -> StockLevel:
        """Classifies the quantity against `threshold`."""
        if self.quantity <= 0:
            return StockLevel.OUT
        if self.quantity < threshold:
            return StockLevel.LOW
        return StockLevel.OK


def total_value_cents(items: list[Item]) -> int:
    """Value of all stock, in cents."""
    return sum(item.value_cents() for item in items)
