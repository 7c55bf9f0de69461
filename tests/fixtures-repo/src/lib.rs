//! A tiny inventory and order-processing service.
//!
//! The [`Ledger`] tracks stock, [`orders::parse_orders`] reads orders from
//! text, [`orders::process`] turns an order into an [`orders::Invoice`], and
//! the [`report`] module renders the results.
//!
//! ```
//! use inventory::{orders, Config, Item, Ledger, Money};
//!
//! let mut ledger = Ledger::new();
//! ledger.add_item(Item::new("BOLT-1", "Bolt", Money::from_cents(25), 100));
//! let order = &orders::parse_orders("order A-1 customer=Ada\n BOLT-1 x4\nend").unwrap()[0];
//! let invoice = orders::process(order, &mut ledger, &Config::default()).unwrap();
//! assert_eq!(invoice.subtotal(), Money::from_cents(100));
//! assert_eq!(ledger.get("BOLT-1").unwrap().quantity, 96);
//! ```

pub mod config;
pub mod error;
pub mod ledger;
pub mod money;
pub mod orders;
pub mod pricing;
pub mod report;

pub use config::Config;
pub use error::{InventoryError, Result};
pub use ledger::{Item, Ledger};
pub use money::Money;
