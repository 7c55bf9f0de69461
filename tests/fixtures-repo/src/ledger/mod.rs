//! The ledger: every item the shop stocks, keyed by SKU.

mod item;

pub use item::Item;

use std::collections::BTreeMap;

use crate::error::{InventoryError, Result};
use crate::money::Money;

/// All stock, ordered by SKU so reports are stable.
#[derive(Debug, Default, Clone)]
pub struct Ledger {
    items: BTreeMap<String, Item>,
}

impl Ledger {
    pub fn new() -> Self {
        Ledger::default()
    }

    /// Adds an item, or adds its quantity to an existing item with the same SKU.
    pub fn add_item(&mut self, item: Item) {
        match self.items.get_mut(&item.sku) {
            Some(existing) => existing.quantity += item.quantity,
            None => {
                self.items.insert(item.sku.clone(), item);
            }
        }
    }

    pub fn get(&self, sku: &str) -> Result<&Item> {
        self.items
            .get(sku)
            .ok_or_else(|| InventoryError::UnknownSku(sku.to_string()))
    }

    /// Checks that `quantity` units of `sku` could be taken, without taking them.
    pub fn check_available(&self, sku: &str, quantity: u32) -> Result<()> {
        let item = self.get(sku)?;
        if item.quantity < quantity {
            return Err(InventoryError::InsufficientStock {
                sku: sku.to_string(),
                requested: quantity,
                available: item.quantity,
            });
        }
        Ok(())
    }

    /// Removes `quantity` units of `sku` from stock.
    pub fn reserve(&mut self, sku: &str, quantity: u32) -> Result<()> {
        self.check_available(sku, quantity)?;
        if let Some(item) = self.items.get_mut(sku) {
            item.quantity -= quantity;
        }
        Ok(())
    }

    pub fn items(&self) -> impl Iterator<Item = &Item> {
        self.items.values()
    }

    pub fn low_stock(&self, threshold: u32) -> Vec<&Item> {
        self.items().filter(|item| item.is_low(threshold)).collect()
    }

    pub fn total_value(&self) -> Money {
        self.items()
            .fold(Money::ZERO, |sum, item| sum + item.stock_value())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Ledger {
        let mut ledger = Ledger::new();
        ledger.add_item(Item::new("BOLT-1", "Bolt", Money::from_cents(25), 100));
        ledger.add_item(Item::new("GEAR-2", "Gear", Money::from_cents(1_250), 2));
        ledger
    }

    #[test]
    fn reserve_reduces_stock() {
        let mut ledger = sample();
        ledger.reserve("BOLT-1", 40).unwrap();
        assert_eq!(ledger.get("BOLT-1").unwrap().quantity, 60);
    }

    #[test]
    fn reserve_rejects_overdraw_and_unknown_sku() {
        let mut ledger = sample();
        assert!(matches!(
            ledger.reserve("GEAR-2", 3),
            Err(InventoryError::InsufficientStock { available: 2, .. })
        ));
        assert_eq!(
            ledger.reserve("NOPE", 1),
            Err(InventoryError::UnknownSku("NOPE".into()))
        );
    }

    #[test]
    fn adding_same_sku_merges_quantity() {
        let mut ledger = sample();
        ledger.add_item(Item::new("GEAR-2", "Gear", Money::from_cents(1_250), 5));
        assert_eq!(ledger.get("GEAR-2").unwrap().quantity, 7);
        assert_eq!(ledger.low_stock(3).len(), 0);
        assert_eq!(ledger.total_value(), Money::from_cents(2_500 + 8_750));
    }
}
