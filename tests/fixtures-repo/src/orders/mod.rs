//! Customer orders and turning them into invoices.

mod parser;

pub use parser::parse_orders;

use crate::config::Config;
use crate::error::Result;
use crate::ledger::Ledger;
use crate::money::Money;
use crate::pricing::{self, LineTotal};

/// One requested SKU and how many units of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderLine {
    pub sku: String,
    pub quantity: u32,
}

/// A customer's order, as read from order text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Order {
    pub id: String,
    pub customer: String,
    pub lines: Vec<OrderLine>,
}

/// A priced, fulfilled order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invoice {
    pub order_id: String,
    pub customer: String,
    pub lines: Vec<LineTotal>,
}

impl Invoice {
    pub fn subtotal(&self) -> Money {
        self.lines
            .iter()
            .fold(Money::ZERO, |sum, l| sum + l.subtotal - l.discount)
    }

    pub fn tax(&self) -> Money {
        self.lines.iter().fold(Money::ZERO, |sum, l| sum + l.tax)
    }

    pub fn total(&self) -> Money {
        self.subtotal() + self.tax()
    }
}

/// Prices an order and removes its items from stock.
///
/// Every line is checked first, so a failing order leaves the ledger untouched.
pub fn process(order: &Order, ledger: &mut Ledger, config: &Config) -> Result<Invoice> {
    for line in &order.lines {
        ledger.check_available(&line.sku, line.quantity)?;
    }
    let mut lines = Vec::with_capacity(order.lines.len());
    for line in &order.lines {
        lines.push(pricing::price_line(
            ledger.get(&line.sku)?,
            line.quantity,
            config,
        ));
        ledger.reserve(&line.sku, line.quantity)?;
    }
    Ok(Invoice {
        order_id: order.id.clone(),
        customer: order.customer.clone(),
        lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::Item;

    #[test]
    fn failed_order_does_not_touch_stock() {
        let mut ledger = Ledger::new();
        ledger.add_item(Item::new("A", "Apple", Money::from_cents(50), 5));
        ledger.add_item(Item::new("B", "Banana", Money::from_cents(30), 1));
        let order = Order {
            id: "X-1".into(),
            customer: "Ada".into(),
            lines: vec![
                OrderLine {
                    sku: "A".into(),
                    quantity: 2,
                },
                OrderLine {
                    sku: "B".into(),
                    quantity: 2,
                },
            ],
        };
        assert!(process(&order, &mut ledger, &Config::default()).is_err());
        assert_eq!(ledger.get("A").unwrap().quantity, 5);
    }
}
