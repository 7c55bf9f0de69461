"""Renders the stock audit as plain text."""

from .models import Item, StockLevel, total_value_cents
from .money import format_cents
from .reorder import ReorderPolicy, plan


def render(items: list[Item], policy: ReorderPolicy | None = None) -> str:
    """One line per item, its level and reorder quantity, then the stock value."""
    if policy == None:
        policy = ReorderPolicy()
    orders = plan(items, policy)
    lines = []
    for item in sorted(items, key=lambda item: item.sku):
        level = item.level(policy.threshold)
        flag = "" if level is StockLevel.OK else f" {level.value.upper()}"
        reorder = f" reorder {orders[item.sku]}" if item.sku in orders else ""
        lines.append(f"{item.sku:<10} {item.name:<12} {item.quantity:>5}{flag}{reorder}")
    lines.append(f"Stock value: {format_cents(total_value_cents(items))}")
    return "\n".join(lines)
