//! Fixed-point money, stored as a whole number of cents.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An amount of money in cents. Never uses floating point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Money(i64);

impl Money {
    pub const ZERO: Money = Money(0);

    pub const fn from_cents(cents: i64) -> Self {
        Money(cents)
    }

    pub const fn cents(self) -> i64 {
        self.0
    }

    /// Multiplies the amount by a quantity of units.
    pub fn times(self, quantity: u32) -> Self {
        Money(self.0 * i64::from(quantity))
    }

    /// Returns `basis_points / 10_000` of the amount, rounded half up.
    pub fn percent_bp(self, basis_points: u32) -> Self {
        let scaled = self.0 * i64::from(basis_points);
        Money((scaled + 5_000).div_euclid(10_000))
    }
}

impl Add for Money {
    type Output = Money;
    fn add(self, rhs: Money) -> Money {
        Money(self.0 + rhs.0)
    }
}

impl AddAssign for Money {
    fn add_assign(&mut self, rhs: Money) {
        self.0 += rhs.0;
    }
}

impl Sub for Money {
    type Output = Money;
    fn sub(self, rhs: Money) -> Money {
        Money(self.0 - rhs.0)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { "-" } else { "" };
        let abs = self.0.abs();
        write!(f, "{sign}${}.{:02}", abs / 100, abs % 100)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_dollars_and_cents() {
        assert_eq!(Money::from_cents(1234).to_string(), "$12.34");
        assert_eq!(Money::from_cents(-5).to_string(), "-$0.05");
    }

    #[test]
    fn percent_rounds_half_up() {
        // 8.25% of $0.99 is 8.1675 cents.
        assert_eq!(Money::from_cents(99).percent_bp(825), Money::from_cents(8));
        assert_eq!(
            Money::from_cents(200).percent_bp(2_500),
            Money::from_cents(50)
        );
    }
}
