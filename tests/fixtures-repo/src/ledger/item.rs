//! A single stock-keeping unit held in the ledger.

use crate::money::Money;

/// One kind of product and how many units are on hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub sku: String,
    pub name: String,
    pub unit_price: Money,
    pub quantity: u32,
    /// Whether sales tax applies to this item.
    pub taxable: bool,
}

impl Item {
    pub fn new(sku: &str, name: &str, unit_price: Money, quantity: u32) -> Self {
        Item {
            sku: sku.to_string(),
            name: name.to_string(),
            unit_price,
            quantity,
            taxable: true,
        }
    }

    /// Marks the item as exempt from sales tax.
    pub fn tax_exempt(mut self) -> Self {
        self.taxable = false;
        self
    }

    /// Value of all units currently in stock.
    pub fn stock_value(&self) -> Money {
        self.unit_price.times(self.quantity)
    }

    pub fn is_low(&self, threshold: u32) -> bool {
        self.quantity <= threshold
    }
}
