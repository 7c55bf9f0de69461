//! Error type shared by every module of the crate.

use std::fmt;

/// Everything that can go wrong while managing stock or processing orders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InventoryError {
    /// The requested SKU is not in the ledger.
    UnknownSku(String),
    /// Not enough units are on hand to satisfy a request.
    InsufficientStock {
        sku: String,
        requested: u32,
        available: u32,
    },
    /// A line of order text could not be understood.
    Parse { line: usize, message: String },
    /// A configuration value is missing or malformed.
    InvalidConfig(String),
}

impl fmt::Display for InventoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InventoryError::UnknownSku(sku) => write!(f, "unknown SKU `{sku}`"),
            InventoryError::InsufficientStock {
                sku,
                requested,
                available,
            } => write!(
                f,
                "insufficient stock for `{sku}`: requested {requested}, available {available}"
            ),
            InventoryError::Parse { line, message } => {
                write!(f, "parse error on line {line}: {message}")
            }
            InventoryError::InvalidConfig(msg) => write!(f, "invalid configuration: {msg}"),
        }
    }
}

impl std::error::Error for InventoryError {}

/// Convenience alias used throughout the crate.
pub type Result<T> = std::result::Result<T, InventoryError>;
