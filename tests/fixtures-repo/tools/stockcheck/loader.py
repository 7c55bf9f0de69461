"""Reads the stock export: one `sku,name,quantity,price` line per item."""

import os

from .models import Item
from .money import parse_cents


class LoadError(ValueError):
    """A line of the export could not be read."""

    def __init__(self, line_no: int, message: str) -> None:
        super().__init__(f"line {line_no}: {message}")
        self.line_no = line_no


def parse_line(line: str, line_no: int) -> Item:
    """Parses one export line into an Item."""
    fields = [field.strip() for field in line.split(",")]
    if len(fields) != 4:
        raise LoadError(line_no, f"expected 4 fields, found {len(fields)}")
    sku, name, quantity, price = fields
    try:
        return Item(sku=sku, name=name, quantity=int(quantity), unit_cents=parse_cents(price))
    except ValueError as err:
        raise LoadError(line_no, str(err)) from err


def load_stock(text: str) -> list[Item]:
    """Parses a whole export, skipping blank lines and `#` comments."""
    items = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        items.append(parse_line(line, line_no))
    return items
