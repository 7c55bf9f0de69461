"""Decides which items to reorder, and how many units of each."""

from dataclasses import dataclass

from .models import Item, StockLevel


@dataclass(frozen=True)
class ReorderPolicy:
    """Reorder up to `target` units whenever stock falls below `threshold`."""

    threshold: int = 10
    target: int = 50

    def needs_reorder(self, item: Item) -> bool:
        """True when the item is low or out of stock."""
        return item.level(self.threshold + 1) is not StockLevel.OK

    def quantity_for(self, item: Item) -> int:
        """Units to order so that stock reaches the target."""
        return max(self.target - item.quantity, 0)


def plan(items: list[Item], policy: ReorderPolicy) -> dict[str, int]:
    """Units to order per SKU, for every item that needs a reorder."""
    return {item.sku: policy.quantity_for(item) for item in items if policy.needs_reorder(item)}
