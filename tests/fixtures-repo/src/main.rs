//! Command-line entry point: loads sample stock, processes orders and
//! prints invoices followed by a stock report.

use std::{env, fs, process};

use inventory::orders::{self, Order};
use inventory::{report, Config, Item, Ledger, Money};

const SAMPLE_ORDERS: &str = "\
order A-1001 customer=Ada
  WIDGET-1 x3
  GEAR-2 x1
end

order A-1002 customer=Grace
  BOLT-1 x12
  BREAD x2
end
";

fn sample_ledger() -> Ledger {
    let mut ledger = Ledger::new();
    ledger.add_item(Item::new("BOLT-1", "Bolt", Money::from_cents(25), 200));
    ledger.add_item(Item::new("GEAR-2", "Gear", Money::from_cents(1_250), 4));
    ledger.add_item(Item::new("WIDGET-1", "Widget", Money::from_cents(499), 30));
    ledger.add_item(Item::new("BREAD", "Bread", Money::from_cents(300), 10).tax_exempt());
    ledger
}

fn load_orders() -> inventory::Result<Vec<Order>> {
    match env::args().nth(1) {
        Some(path) => {
            let text = fs::read_to_string(&path).unwrap_or_else(|err| {
                eprintln!("cannot read {path}: {err}");
                process::exit(2);
            });
            orders::parse_orders(&text)
        }
        None => orders::parse_orders(SAMPLE_ORDERS),
    }
}

fn main() {
    let config = Config::default();
    let mut ledger = sample_ledger();

    let orders = load_orders().unwrap_or_else(|err| {
        eprintln!("error: {err}");
        process::exit(1);
    });

    for order in &orders {
        match orders::process(order, &mut ledger, &config) {
            Ok(invoice) => println!("{}", report::invoice_report(&invoice)),
            Err(err) => eprintln!("order {} rejected: {err}", order.id),
        }
    }
    print!("{}", report::stock_report(&ledger, &config));
}
