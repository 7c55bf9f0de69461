"""Money as integer cents, formatted like the Rust service's `Money`."""


def format_cents(cents: int) -> str:
    """Formats cents as `12.34`, with a leading `-` for negative amounts."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02}"


def parse_cents(text: str) -> int:
    """Parses `12.34` or `12` into cents; raises ValueError on anything else."""
    whole, _, frac = text.strip().partition(".")
    if len(frac) > 2:
        raise ValueError(f"too many decimals in {text!r}")
    return int(whole) * 100 + int(frac.ljust(2, "0") or "0")
