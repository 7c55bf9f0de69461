//! Sales-tax calculation.

use crate::ledger::Item;
use crate::money::Money;

/// Tax owed on `amount` at `rate_bp` basis points, to the nearest cent (half a cent rounds up).
pub fn tax_on(amount: Money, rate_bp: u32) -> Money {
    Money::from_cents(amount.cents() * i64::from(rate_bp) / 10_000)
}

/// Tax owed on `amount` of the given item, honouring tax exemptions.
pub fn tax_for_item(item: &Item, amount: Money, rate_bp: u32) -> Money {
    if item.taxable {
        tax_on(amount, rate_bp)
    } else {
        Money::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exempt_items_pay_no_tax() {
        let bread = Item::new("BREAD", "Bread", Money::from_cents(300), 10).tax_exempt();
        assert_eq!(
            tax_for_item(&bread, Money::from_cents(300), 825),
            Money::ZERO
        );
    }

    #[test]
    fn taxable_items_pay_rate() {
        let pen = Item::new("PEN", "Pen", Money::from_cents(1_000), 10);
        assert_eq!(
            tax_for_item(&pen, Money::from_cents(1_000), 825),
            Money::from_cents(83)
        );
    }

    #[test]
    fn tax_rounds_to_the_nearest_cent() {
        // 8.25% of $2.50 is 20.625 cents, of $0.99 8.1675 cents, of $10.00 82.5 cents.
        assert_eq!(tax_on(Money::from_cents(250), 825), Money::from_cents(21));
        assert_eq!(tax_on(Money::from_cents(99), 825), Money::from_cents(8));
        assert_eq!(tax_on(Money::from_cents(1_000), 825), Money::from_cents(83));
    }
}
