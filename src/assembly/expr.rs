//! UPDATE-rule expressions: the language a peer writes its update rule in, and its evaluator.
//!
//! A rule is an arithmetic expression over its class's named local quantities:
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/') unary)*
//! unary   := ('+' | '-') unary | primary
//! primary := number | name | function '(' expr (',' expr)* ')' | '(' expr ')'
//! number  := digits ['.' digits] | '.' digits, then optionally (e|E) [+|-] digits
//! ```
//!
//! Functions: `max` and `min` of one or more arguments, `abs(x)`, `clamp(x, lo, hi)`. Nothing else:
//! `sqrt`, `^`, comparison or implicit multiplication are errors, because a rule that leans on them
//! is not one the class's reference can be compared against, and because a small closed language
//! is one a fuzzer can cover.
//!
//! Decisions:
//!
//! - **Names are checked when the rule is parsed**, against the class's quantity names, so an
//!   unknown name is reported at its column before any value exists.
//! - **Errors say where and why**: each carries the byte offset and the 1-based column (in
//!   characters) of the offending token, and the message names what was expected.
//! - **No non-finite value ever escapes.** A division by zero, an overflow to infinity, a number
//!   literal out of range (`1e999`), a non-finite input and `clamp` with `lo > hi` are errors, never
//!   values: an announced value must be something an engine can apply.
//! - **Bounded input**: at most [`MAX_LEN`] bytes and [`MAX_DEPTH`] levels of nesting, so
//!   arbitrary input can neither overflow the stack nor take long.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use thiserror::Error;

/// Named values a rule is evaluated over.
pub type Quantities = BTreeMap<String, f64>;

/// The longest expression accepted, in bytes.
pub const MAX_LEN: usize = 4096;

/// The deepest nesting of parentheses, calls and unary signs accepted.
pub const MAX_DEPTH: usize = 64;

/// The functions a rule may call.
pub const FUNCTIONS: [&str; 4] = ["max", "min", "abs", "clamp"];

/// Why an expression could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExprError {
    /// Nothing but whitespace.
    #[error("the expression is empty")]
    Empty,
    /// Longer than [`MAX_LEN`].
    #[error("the expression is {len} bytes long; the limit is {MAX_LEN}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("column {column}: nesting is deeper than {MAX_DEPTH} levels")]
    TooDeep {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
    },
    /// A character that is not part of the language.
    #[error("column {column}: unexpected character {found:?}")]
    UnexpectedChar {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The character.
        found: char,
    },
    /// A token where something else was needed.
    #[error("column {column}: expected {expected}, found {found}")]
    UnexpectedToken {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// What was found.
        found: String,
        /// What would have fit.
        expected: &'static str,
    },
    /// A number literal that does not denote a finite number.
    #[error("column {column}: {text:?} is not a finite number")]
    BadNumber {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The literal.
        text: String,
    },
    /// A name that is not one of the class's quantities.
    #[error("column {column}: unknown name `{name}`; the names are: {known}")]
    UnknownName {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The name.
        name: String,
        /// The names that are allowed, comma-separated.
        known: String,
    },
    /// A call of a function the language does not have.
    #[error("column {column}: unknown function `{name}`; the functions are max, min, abs and clamp")]
    UnknownFunction {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The name.
        name: String,
    },
    /// A function called with the wrong number of arguments.
    #[error("column {column}: `{function}` takes {expected}, found {found}")]
    Arity {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The function.
        function: &'static str,
        /// How many it takes.
        expected: &'static str,
        /// How many it got.
        found: usize,
    },
    /// A quantity with no value when the rule was evaluated.
    #[error("column {column}: `{name}` has no value")]
    Unbound {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The name.
        name: String,
    },
    /// A quantity whose value is NaN or infinite.
    #[error("column {column}: `{name}` is {value}, not a finite number")]
    NonFiniteInput {
        /// Byte offset.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The name.
        name: String,
        /// Its value.
        value: f64,
    },
    /// A division whose divisor is zero.
    #[error("column {column}: division by zero")]
    DivisionByZero {
        /// Byte offset of the `/`.
        at: usize,
        /// 1-based column.
        column: usize,
    },
    /// An operation whose result is not finite (overflow).
    #[error("column {column}: `{op}` gives a result that is not finite")]
    NonFinite {
        /// Byte offset of the operator or function.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The operator or function.
        op: &'static str,
    },
    /// `clamp(x, lo, hi)` with `lo > hi`.
    #[error("column {column}: clamp's lower bound {lo} is above its upper bound {hi}")]
    ClampBounds {
        /// Byte offset of `clamp`.
        at: usize,
        /// 1-based column.
        column: usize,
        /// The lower bound.
        lo: f64,
        /// The upper bound.
        hi: f64,
    },
}

impl ExprError {
    /// The byte offset the error points at, when it points at one.
    pub fn offset(&self) -> Option<usize> {
        match self {
            ExprError::Empty | ExprError::TooLong { .. } => None,
            ExprError::TooDeep { at, .. }
            | ExprError::UnexpectedChar { at, .. }
            | ExprError::UnexpectedToken { at, .. }
            | ExprError::BadNumber { at, .. }
            | ExprError::UnknownName { at, .. }
            | ExprError::UnknownFunction { at, .. }
            | ExprError::Arity { at, .. }
            | ExprError::Unbound { at, .. }
            | ExprError::NonFiniteInput { at, .. }
            | ExprError::DivisionByZero { at, .. }
            | ExprError::NonFinite { at, .. }
            | ExprError::ClampBounds { at, .. } => Some(*at),
        }
    }
}

/// The 1-based character column of byte offset `at` in `src`.
fn column(src: &str, at: usize) -> usize {
    src.get(..at).map_or(at, |head| head.chars().count()) + 1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Max,
    Min,
    Abs,
    Clamp,
}

impl Func {
    fn lookup(name: &str) -> Option<Func> {
        Some(match name {
            "max" => Func::Max,
            "min" => Func::Min,
            "abs" => Func::Abs,
            "clamp" => Func::Clamp,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Func::Max => "max",
            Func::Min => "min",
            Func::Abs => "abs",
            Func::Clamp => "clamp",
        }
    }

    fn arity(self, n: usize) -> Result<(), &'static str> {
        match self {
            Func::Max | Func::Min if n >= 1 => Ok(()),
            Func::Max | Func::Min => Err("one or more arguments"),
            Func::Abs if n == 1 => Ok(()),
            Func::Abs => Err("one argument"),
            Func::Clamp if n == 3 => Ok(()),
            Func::Clamp => Err("three arguments (x, lo, hi)"),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Number(f64),
    Var {
        name: String,
        at: usize,
    },
    Neg(Box<Node>),
    /// A left-associative chain `first op₁ x₁ op₂ x₂ …` of one precedence level, kept flat so that
    /// neither evaluation nor drop recurses along a long sum.
    Chain {
        first: Box<Node>,
        rest: Vec<(BinOp, usize, Node)>,
    },
    Call {
        func: Func,
        at: usize,
        args: Vec<Node>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Op(BinOp),
    LParen,
    RParen,
    Comma,
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Num(x) => format!("number {x}"),
            Tok::Ident(name) => format!("name `{name}`"),
            Tok::Op(op) => format!("`{}`", op.symbol()),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Comma => "`,`".into(),
            Tok::End => "the end of the expression".into(),
        }
    }
}

fn lex(src: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        match b {
            b'+' => toks.push((Tok::Op(BinOp::Add), i)),
            b'-' => toks.push((Tok::Op(BinOp::Sub), i)),
            b'*' => toks.push((Tok::Op(BinOp::Mul), i)),
            b'/' => toks.push((Tok::Op(BinOp::Div), i)),
            b'(' => toks.push((Tok::LParen, i)),
            b')' => toks.push((Tok::RParen, i)),
            b',' => toks.push((Tok::Comma, i)),
            b'0'..=b'9' | b'.' => {
                let digits = |j: &mut usize| {
                    let from = *j;
                    while *j < bytes.len() && bytes[*j].is_ascii_digit() {
                        *j += 1;
                    }
                    *j - from
                };
                let mut j = i;
                let mut mantissa = digits(&mut j);
                if j < bytes.len() && bytes[j] == b'.' {
                    j += 1;
                    mantissa += digits(&mut j);
                }
                if mantissa == 0 {
                    return Err(ExprError::UnexpectedChar { at: i, column: column(src, i), found: '.' });
                }
                if j < bytes.len() && (bytes[j] == b'e' || bytes[j] == b'E') {
                    let mut k = j + 1;
                    if k < bytes.len() && (bytes[k] == b'+' || bytes[k] == b'-') {
                        k += 1;
                    }
                    if digits(&mut k) > 0 {
                        j = k;
                    }
                }
                let text = &src[start..j];
                match text.parse::<f64>() {
                    Ok(x) if x.is_finite() => toks.push((Tok::Num(x), start)),
                    _ => {
                        return Err(ExprError::BadNumber { at: start, column: column(src, start), text: text.into() });
                    }
                }
                i = j;
                continue;
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                let mut j = i;
                while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                    j += 1;
                }
                toks.push((Tok::Ident(src[start..j].to_owned()), start));
                i = j;
                continue;
            }
            _ => {
                // Whitespace of any kind is skipped; anything else is not part of the language.
                let ch = src.get(i..).and_then(|rest| rest.chars().next()).unwrap_or('\u{fffd}');
                if !ch.is_whitespace() {
                    return Err(ExprError::UnexpectedChar { at: i, column: column(src, i), found: ch });
                }
                i += ch.len_utf8();
                continue;
            }
        }
        i += 1;
    }
    toks.push((Tok::End, src.len()));
    Ok(toks)
}

fn chain(first: Node, rest: Vec<(BinOp, usize, Node)>) -> Node {
    if rest.is_empty() { first } else { Node::Chain { first: Box::new(first), rest } }
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<(Tok, usize)>,
    pos: usize,
    depth: usize,
    names: &'a [&'a str],
}

impl Parser<'_> {
    fn peek(&self) -> (&Tok, usize) {
        match self.toks.get(self.pos) {
            Some((tok, at)) => (tok, *at),
            None => (&Tok::End, self.src.len()),
        }
    }

    fn bump(&mut self) {
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
    }

    fn unexpected(&self, expected: &'static str) -> ExprError {
        let (tok, at) = self.peek();
        ExprError::UnexpectedToken { at, column: column(self.src, at), found: tok.describe(), expected }
    }

    fn enter(&mut self, at: usize) -> Result<(), ExprError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(ExprError::TooDeep { at, column: column(self.src, at) });
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Node, ExprError> {
        let first = self.term()?;
        let mut rest = Vec::new();
        loop {
            let (tok, at) = self.peek();
            let op = match tok {
                Tok::Op(op @ (BinOp::Add | BinOp::Sub)) => *op,
                _ => return Ok(chain(first, rest)),
            };
            self.bump();
            rest.push((op, at, self.term()?));
        }
    }

    fn term(&mut self) -> Result<Node, ExprError> {
        let first = self.unary()?;
        let mut rest = Vec::new();
        loop {
            let (tok, at) = self.peek();
            let op = match tok {
                Tok::Op(op @ (BinOp::Mul | BinOp::Div)) => *op,
                _ => return Ok(chain(first, rest)),
            };
            self.bump();
            rest.push((op, at, self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        let (tok, at) = self.peek();
        let negate = match tok {
            Tok::Op(BinOp::Sub) => true,
            Tok::Op(BinOp::Add) => false,
            _ => return self.primary(),
        };
        self.bump();
        self.enter(at)?;
        let operand = self.unary()?;
        self.depth -= 1;
        Ok(if negate { Node::Neg(Box::new(operand)) } else { operand })
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        let (tok, at) = self.peek();
        match tok.clone() {
            Tok::Num(x) => {
                self.bump();
                Ok(Node::Number(x))
            }
            Tok::LParen => {
                self.bump();
                self.enter(at)?;
                let inner = self.expr()?;
                if self.peek().0 != &Tok::RParen {
                    return Err(self.unexpected("`)` or an operator"));
                }
                self.bump();
                self.depth -= 1;
                Ok(inner)
            }
            Tok::Ident(name) => {
                self.bump();
                if self.peek().0 == &Tok::LParen {
                    self.call(name, at)
                } else if self.names.contains(&name.as_str()) {
                    Ok(Node::Var { name, at })
                } else {
                    Err(ExprError::UnknownName { at, column: column(self.src, at), name, known: self.names.join(", ") })
                }
            }
            _ => Err(self.unexpected("a number, a name, a function call or `(`")),
        }
    }

    fn call(&mut self, name: String, at: usize) -> Result<Node, ExprError> {
        let Some(func) = Func::lookup(&name) else {
            return Err(ExprError::UnknownFunction { at, column: column(self.src, at), name });
        };
        self.bump(); // `(`
        self.enter(at)?;
        let mut args = Vec::new();
        if self.peek().0 != &Tok::RParen {
            loop {
                args.push(self.expr()?);
                match self.peek().0 {
                    Tok::Comma => self.bump(),
                    Tok::RParen => break,
                    _ => return Err(self.unexpected("`,`, `)` or an operator")),
                }
            }
        }
        self.bump(); // `)`
        self.depth -= 1;
        func.arity(args.len()).map_err(|expected| ExprError::Arity {
            at,
            column: column(self.src, at),
            function: func.name(),
            expected,
            found: args.len(),
        })?;
        Ok(Node::Call { func, at, args })
    }
}

/// A parsed UPDATE rule.
#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    source: String,
    root: Node,
}

impl Expr {
    /// Parses `src`, allowing only the quantity names in `names`.
    pub fn parse(src: &str, names: &[&str]) -> Result<Expr, ExprError> {
        if src.len() > MAX_LEN {
            return Err(ExprError::TooLong { len: src.len() });
        }
        if src.trim().is_empty() {
            return Err(ExprError::Empty);
        }
        let toks = lex(src)?;
        let mut parser = Parser { src, toks, pos: 0, depth: 0, names };
        let root = parser.expr()?;
        if parser.peek().0 != &Tok::End {
            return Err(parser.unexpected("an operator or the end of the expression"));
        }
        Ok(Expr { source: src.to_owned(), root })
    }

    /// The text it was parsed from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The quantity names it reads.
    pub fn names(&self) -> BTreeSet<&str> {
        fn walk<'n>(node: &'n Node, out: &mut BTreeSet<&'n str>) {
            match node {
                Node::Number(_) => {}
                Node::Var { name, .. } => {
                    out.insert(name);
                }
                Node::Neg(inner) => walk(inner, out),
                Node::Chain { first, rest } => {
                    walk(first, out);
                    rest.iter().for_each(|(_, _, x)| walk(x, out));
                }
                Node::Call { args, .. } => args.iter().for_each(|a| walk(a, out)),
            }
        }
        let mut out = BTreeSet::new();
        walk(&self.root, &mut out);
        out
    }

    /// Evaluates the rule over `values`. Every name it reads must have a finite value.
    pub fn eval(&self, values: &Quantities) -> Result<f64, ExprError> {
        self.eval_node(&self.root, values)
    }

    fn at(&self, at: usize) -> (usize, usize) {
        (at, column(&self.source, at))
    }

    fn eval_node(&self, node: &Node, values: &Quantities) -> Result<f64, ExprError> {
        match node {
            Node::Number(x) => Ok(*x),
            Node::Var { name, at } => {
                let (at, column) = self.at(*at);
                match values.get(name) {
                    None => Err(ExprError::Unbound { at, column, name: name.clone() }),
                    Some(v) if !v.is_finite() => {
                        Err(ExprError::NonFiniteInput { at, column, name: name.clone(), value: *v })
                    }
                    Some(v) => Ok(*v),
                }
            }
            Node::Neg(inner) => Ok(-self.eval_node(inner, values)?),
            Node::Chain { first, rest } => {
                let mut acc = self.eval_node(first, values)?;
                for (op, at, operand) in rest {
                    let b = self.eval_node(operand, values)?;
                    let (at, column) = self.at(*at);
                    acc = match op {
                        BinOp::Add => acc + b,
                        BinOp::Sub => acc - b,
                        BinOp::Mul => acc * b,
                        BinOp::Div if b == 0.0 => return Err(ExprError::DivisionByZero { at, column }),
                        BinOp::Div => acc / b,
                    };
                    if !acc.is_finite() {
                        return Err(ExprError::NonFinite { at, column, op: op.symbol() });
                    }
                }
                Ok(acc)
            }
            Node::Call { func, at, args } => {
                let mut xs = Vec::with_capacity(args.len());
                for arg in args {
                    xs.push(self.eval_node(arg, values)?);
                }
                let (at, column) = self.at(*at);
                let bad_arity =
                    || ExprError::Arity { at, column, function: func.name(), expected: "", found: xs.len() };
                match func {
                    Func::Max => xs.iter().copied().reduce(f64::max).ok_or_else(bad_arity),
                    Func::Min => xs.iter().copied().reduce(f64::min).ok_or_else(bad_arity),
                    Func::Abs => xs.first().map(|x| x.abs()).ok_or_else(bad_arity),
                    Func::Clamp => match xs.as_slice() {
                        [x, lo, hi] if lo <= hi => Ok(x.max(*lo).min(*hi)),
                        [_, lo, hi] => Err(ExprError::ClampBounds { at, column, lo: *lo, hi: *hi }),
                        _ => Err(bad_arity()),
                    },
                }
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

/// Parses `src` over the names in `values` and evaluates it there.
pub fn evaluate(src: &str, values: &Quantities) -> Result<f64, ExprError> {
    let names: Vec<&str> = values.keys().map(String::as_str).collect();
    Expr::parse(src, &names)?.eval(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn abc() -> Quantities {
        [("a", 2.0), ("b", 3.0), ("c", -4.0)].into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    }

    fn eval(src: &str) -> Result<f64, ExprError> {
        evaluate(src, &abc())
    }

    #[test]
    fn published_expectations() {
        assert_eq!(eval("a+b*c"), Ok(-10.0));
        assert_eq!(eval("clamp(b*10, 0, a)"), Ok(2.0));
        assert_eq!(eval("1.5e1 + .5"), Ok(15.5));
    }

    #[test]
    fn value_table() {
        let cases: &[(&str, f64)] = &[
            ("1", 1.0),
            ("  a ", 2.0),
            ("(a+b)*c", -20.0),
            ("a-b-c", 3.0),
            ("a/b/a", 2.0 / 3.0 / 2.0),
            ("-a", -2.0),
            ("--a", 2.0),
            ("+a", 2.0),
            ("-a*-b", 6.0),
            ("a - -b", 5.0),
            ("max(a)", 2.0),
            ("max(a, b, c)", 3.0),
            ("min(a, b, c)", -4.0),
            ("abs(c)", 4.0),
            ("clamp(c, 0, a)", 0.0),
            ("clamp(b, b, b)", 3.0),
            ("2.", 2.0),
            ("1e3", 1000.0),
            ("1E-3", 0.001),
            ("2.5e+1", 25.0),
            ("max(0, min(a, b)) + abs(-1)", 3.0),
            ("a\t*\nb", 6.0),
        ];
        for (src, want) in cases {
            let got = eval(src);
            assert_eq!(got, Ok(*want), "{src:?}");
        }
    }

    #[test]
    fn errors_say_where_and_why() {
        let cases: &[(&str, &str, Option<usize>)] = &[
            ("", "empty", None),
            ("a +", "expected a number", Some(3)),
            ("a b", "expected an operator", Some(2)),
            ("sqrt(a)", "unknown function `sqrt`", Some(0)),
            ("a + zeta", "unknown name `zeta`", Some(4)),
            ("max()", "one or more", Some(0)),
            ("abs(a, b)", "one argument", Some(0)),
            ("clamp(a, b)", "three arguments", Some(0)),
            ("(a", "`)`", Some(2)),
            ("a)", "the end", Some(1)),
            ("a ^ 2", "unexpected character '^'", Some(2)),
            ("1e999", "not a finite number", Some(0)),
            ("a / (b - 3)", "division by zero", Some(2)),
            ("clamp(a, b, c)", "lower bound", Some(0)),
            ("max", "unknown name `max`", Some(0)),
            (".", "unexpected character '.'", Some(0)),
            ("é + a", "unexpected character 'é'", Some(0)),
            ("1e308 * 10", "not finite", Some(6)),
        ];
        for (src, needle, offset) in cases {
            let err = eval(src).expect_err(src);
            assert!(err.to_string().contains(needle), "{src:?}: {err}");
            assert_eq!(err.offset(), *offset, "{src:?}: {err}");
        }
    }

    #[test]
    fn columns_count_characters() {
        let err = eval("ééé + zeta").unwrap_err();
        assert!(err.to_string().starts_with("column 1:"), "{err}");
        let names = ["a"];
        let err = Expr::parse("a + é", &names).unwrap_err();
        assert_eq!(err.offset(), Some(4));
        assert!(err.to_string().starts_with("column 5:"), "{err}");
    }

    #[test]
    fn non_finite_inputs_and_missing_values_are_errors() {
        let expr = Expr::parse("a + b", &["a", "b"]).unwrap();
        let mut values = abc();
        values.insert("b".into(), f64::NAN);
        assert!(matches!(expr.eval(&values), Err(ExprError::NonFiniteInput { .. })));
        values.remove("b");
        assert!(matches!(expr.eval(&values), Err(ExprError::Unbound { .. })));
    }

    #[test]
    fn nesting_and_length_are_bounded() {
        let deep = format!("{}1{}", "(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert!(matches!(eval(&deep), Err(ExprError::TooDeep { .. })));
        let ok = format!("{}1{}", "(".repeat(MAX_DEPTH), ")".repeat(MAX_DEPTH));
        assert_eq!(eval(&ok), Ok(1.0));
        assert!(matches!(eval(&"-".repeat(1000)), Err(ExprError::TooDeep { .. })));
        let long = vec!["a"; MAX_LEN].join("+");
        assert!(matches!(eval(&long), Err(ExprError::TooLong { .. })));
        let wide = vec!["a"; 1000].join("+");
        assert_eq!(eval(&wide), Ok(2000.0));
    }

    #[test]
    fn names_lists_what_the_rule_reads() {
        let expr = Expr::parse("max(a, c) - a", &["a", "b", "c"]).unwrap();
        assert_eq!(expr.names().into_iter().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(expr.to_string(), "max(a, c) - a");
    }

    proptest! {
        #[test]
        fn parser_never_panics(src in "\\PC{0,80}") {
            let _ = eval(&src);
        }

        #[test]
        fn parser_never_panics_on_expression_like_input(src in "[-+*/(),.0-9eEabc maxinclpsq]{0,60}") {
            if let Ok(x) = eval(&src) {
                prop_assert!(x.is_finite());
            }
        }
    }
}
