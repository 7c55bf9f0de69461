//! Turns an item and a quantity into a fully priced order line.

pub mod tax;

use crate::config::Config;
use crate::ledger::Item;
use crate::money::Money;

/// The price breakdown for one line of an order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineTotal {
    pub sku: String,
    pub name: String,
    pub quantity: u32,
    pub subtotal: Money,
    pub discount: Money,
    pub tax: Money,
}

impl LineTotal {
    /// Amount charged for the line after discount and tax.
    pub fn total(&self) -> Money {
        self.subtotal - self.discount + self.tax
    }
}

/// Discount earned by buying `quantity` units at once.
pub fn bulk_discount(subtotal: Money, quantity: u32, config: &Config) -> Money {
    if quantity >= config.bulk_min_quantity {
        subtotal.percent_bp(config.bulk_discount_bp)
    } else {
        Money::ZERO
    }
}

/// Prices `quantity` units of `item` using the shop's configuration.
pub fn price_line(item: &Item, quantity: u32, config: &Config) -> LineTotal {
    let subtotal = item.unit_price.times(quantity);
    let discount = bulk_discount(subtotal, quantity, config);
    let tax = tax::tax_for_item(item, subtotal - discount, config.tax_rate_bp);
    LineTotal {
        sku: item.sku.clone(),
        name: item.name.clone(),
        quantity,
        subtotal,
        discount,
        tax,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_lines_are_discounted_before_tax() {
        let config = Config::default();
        let bolt = Item::new("BOLT-1", "Bolt", Money::from_cents(100), 50);
        let line = price_line(&bolt, 10, &config);
        assert_eq!(line.subtotal, Money::from_cents(1_000));
        assert_eq!(line.discount, Money::from_cents(50));
        assert_eq!(line.tax, Money::from_cents(78));
        assert_eq!(line.total(), Money::from_cents(1_028));
    }
}
