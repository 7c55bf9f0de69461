//! Plain-text rendering of invoices and stock levels.

use std::fmt::Write;

use crate::config::Config;
use crate::ledger::Ledger;
use crate::money::Money;
use crate::orders::Invoice;

const RULE: &str = "----------------------------------------------";

/// Renders an invoice as a fixed-width table.
pub fn invoice_report(invoice: &Invoice) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Invoice {} for {}", invoice.order_id, invoice.customer);
    let _ = writeln!(out, "{RULE}");
    for line in &invoice.lines {
        let _ = writeln!(
            out,
            "{:<10} {:<12} {:>4} {:>16}",
            line.sku,
            line.name,
            line.quantity,
            line.total().to_string()
        );
        if line.discount > Money::ZERO {
            let _ = writeln!(
                out,
                "{:>28} {:>16}",
                "bulk discount",
                format!("-{}", line.discount)
            );
        }
    }
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(
        out,
        "{:<28} {:>16}",
        "Subtotal",
        invoice.subtotal().to_string()
    );
    let _ = writeln!(out, "{:<28} {:>16}", "Tax", invoice.tax().to_string());
    let _ = writeln!(out, "{:<28} {:>16}", "Total", invoice.total().to_string());
    out
}

/// Lists every item with its quantity, flagging low stock.
pub fn stock_report(ledger: &Ledger, config: &Config) -> String {
    let mut out = String::from("Stock\n");
    let _ = writeln!(out, "{RULE}");
    for item in ledger.items() {
        let flag = if item.is_low(config.low_stock_threshold) {
            "  LOW"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "{:<10} {:<12} {:>5}{flag}",
            item.sku, item.name, item.quantity
        );
    }
    let _ = writeln!(out, "{RULE}");
    let _ = writeln!(out, "Stock value: {}", ledger.total_value());
    out
}

// Deliberate compiler warning: this helper is intentionally never called so
// that the crate always produces one `dead_code` diagnostic for tooling to see.
fn csv_row(fields: &[&str]) -> String {
    fields.join(",")
}
