//! Parser for the plain-text order format:
//!
//! ```text
//! order A-1001 customer=Ada
//!   WIDGET-1 x3
//! end
//! ```

use super::{Order, OrderLine};
use crate::error::{InventoryError, Result};

fn parse_error(line: usize, message: impl Into<String>) -> InventoryError {
    InventoryError::Parse {
        line,
        message: message.into(),
    }
}

fn parse_header(rest: &str, line_no: usize) -> Result<Order> {
    let mut parts = rest.split_whitespace();
    let id = parts
        .next()
        .ok_or_else(|| parse_error(line_no, "order id missing"))?;
    let customer = parts
        .next()
        .and_then(|p| p.strip_prefix("customer="))
        .ok_or_else(|| parse_error(line_no, "expected customer=NAME"))?;
    Ok(Order {
        id: id.to_string(),
        customer: customer.to_string(),
        lines: Vec::new(),
    })
}

fn parse_line(text: &str, line_no: usize) -> Result<OrderLine> {
    let (sku, qty) = text
        .split_once(" x")
        .ok_or_else(|| parse_error(line_no, format!("expected `SKU xQTY`, found `{text}`")))?;
    let quantity: u32 = qty
        .trim()
        .parse()
        .map_err(|_| parse_error(line_no, format!("bad quantity `{}`", qty.trim())))?;
    if quantity == 0 {
        return Err(parse_error(line_no, "quantity must be at least 1"));
    }
    Ok(OrderLine {
        sku: sku.trim().to_string(),
        quantity,
    })
}

/// Parses every order in `text`. Line numbers in errors are 1-based.
pub fn parse_orders(text: &str) -> Result<Vec<Order>> {
    let mut orders = Vec::new();
    let mut current: Option<Order> = None;
    for (idx, raw) in text.lines().enumerate() {
        let line_no = idx + 1;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match (line.strip_prefix("order "), current.as_mut()) {
            (Some(_), Some(_)) => return Err(parse_error(line_no, "nested order; missing `end`")),
            (Some(rest), None) => current = Some(parse_header(rest, line_no)?),
            (None, None) => return Err(parse_error(line_no, "item outside of an order")),
            (None, Some(order)) if line == "end" => {
                if order.lines.is_empty() {
                    return Err(parse_error(line_no, "order has no items"));
                }
                orders.extend(current.take());
            }
            (None, Some(order)) => order.lines.push(parse_line(line, line_no)?),
        }
    }
    if current.is_some() {
        return Err(parse_error(text.lines().count(), "unterminated order"));
    }
    Ok(orders)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_two_orders() {
        let text = "order A-1 customer=Ada\n  BOLT-1 x3\n  GEAR-2 x1\nend\n\n# rush\norder A-2 customer=Bob\n BOLT-1 x10\nend\n";
        let orders = parse_orders(text).unwrap();
        assert_eq!(orders.len(), 2);
        assert_eq!(
            orders[0].lines[1],
            OrderLine {
                sku: "GEAR-2".into(),
                quantity: 1
            }
        );
        assert_eq!(orders[1].customer, "Bob");
    }

    #[test]
    fn reports_line_of_bad_quantity() {
        let err = parse_orders("order A-1 customer=Ada\n  BOLT-1 xmany\nend").unwrap_err();
        assert!(matches!(err, InventoryError::Parse { line: 2, .. }));
    }
}
