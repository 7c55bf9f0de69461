"""Command line: `python -m stockcheck.cli EXPORT [THRESHOLD]`."""

import sys

from .loader import LoadError, load_stock
from .reorder import ReorderPolicy
from .report import render


def main(argv: list[str]) -> int:
    """Prints the audit of the export named in `argv`; returns the exit code."""
    if len(argv) not in (2, 3):
        print("usage: stockcheck EXPORT [THRESHOLD]", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as export:
        text = export.read()
    try:
        items = load_stock(text)
    except LoadError as err:
        print(f"stockcheck: {err}", file=sys.stderr)
        return 1
    threshold = int(argv[2]) if len(argv) == 3 else 10
    policy = ReorderPolicy(threshold=threshold)
    summary = render(items, policy)
    print(render(items, policy))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
