"""The reorder plan: what falls below the threshold is topped up to the target, nothing else."""

import unittest

from stockcheck.models import Item
from stockcheck.reorder import ReorderPolicy, plan


def item(sku: str, quantity: int) -> Item:
    return Item(sku=sku, name=sku.title(), quantity=quantity, unit_cents=100)


class ReorderTest(unittest.TestCase):
    def test_below_the_threshold_is_topped_up_to_the_target(self) -> None:
        policy = ReorderPolicy(threshold=10, target=50)
        self.assertEqual(plan([item("bolt", 9), item("gear", 0)], policy), {"bolt": 41, "gear": 50})

    def test_at_the_threshold_is_not_reordered(self) -> None:
        policy = ReorderPolicy(threshold=10, target=50)
        self.assertFalse(policy.needs_reorder(item("bolt", 10)))
        self.assertEqual(plan([item("bolt", 10), item("nut", 11)], policy), {})

    def test_above_the_target_orders_nothing(self) -> None:
        policy = ReorderPolicy(threshold=60, target=50)
        self.assertEqual(policy.quantity_for(item("bolt", 55)), 0)


if __name__ == "__main__":
    unittest.main()
