//! Service configuration, read from simple `key = value` text.

use crate::error::{InventoryError, Result};

/// Tunable settings for pricing and reporting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Sales tax rate in basis points (825 = 8.25%).
    pub tax_rate_bp: u32,
    /// Minimum quantity on a single line that earns the bulk discount.
    pub bulk_min_quantity: u32,
    /// Bulk discount in basis points.
    pub bulk_discount_bp: u32,
    /// Items at or below this quantity are flagged as low stock.
    pub low_stock_threshold: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            tax_rate_bp: 825,
            bulk_min_quantity: 10,
            bulk_discount_bp: 500,
            low_stock_threshold: 3,
        }
    }
}

impl Config {
    /// Parses `key = value` lines on top of the defaults.
    /// Blank lines and `#` comments are ignored.
    pub fn parse(text: &str) -> Result<Config> {
        let mut config = Config::default();
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, value) = line.split_once('=').ok_or_else(|| {
                InventoryError::InvalidConfig(format!("expected key = value: `{line}`"))
            })?;
            let value: u32 = value.trim().parse().map_err(|_| {
                InventoryError::InvalidConfig(format!("`{}` is not a number", value.trim()))
            })?;
            match key.trim() {
                "tax_rate_bp" => config.tax_rate_bp = value,
                "bulk_min_quantity" => config.bulk_min_quantity = value,
                "bulk_discount_bp" => config.bulk_discount_bp = value,
                "low_stock_threshold" => config.low_stock_threshold = value,
                other => {
                    return Err(InventoryError::InvalidConfig(format!(
                        "unknown key `{other}`"
                    )))
                }
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_defaults() {
        let config =
            Config::parse("# shop settings\ntax_rate_bp = 700\n\nlow_stock_threshold=5\n").unwrap();
        assert_eq!(config.tax_rate_bp, 700);
        assert_eq!(config.low_stock_threshold, 5);
        assert_eq!(
            config.bulk_min_quantity,
            Config::default().bulk_min_quantity
        );
    }

    #[test]
    fn rejects_unknown_keys() {
        let err = Config::parse("colour = 3").unwrap_err();
        assert!(matches!(err, InventoryError::InvalidConfig(_)));
    }
}
