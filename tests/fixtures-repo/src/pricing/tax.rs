//! Sales-tax calculation.

use crate::ledger::Item;
use crate::money::Money;

/// Tax owed on `amount` at `rate_bp` basis points.
pub fn tax_on(amount: Money, rate_bp: u32) -> Money {
    amount.percent_bp(rate_bp)
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
}
