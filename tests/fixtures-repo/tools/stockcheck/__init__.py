"""stockcheck: audits a stock export from the inventory service and plans reorders."""

from .loader import load_stock
from .models import Item, StockLevel

__all__ = ["Item", "StockLevel", "load_stock"]
