//! Task naming: does the team's task text name a target?
//!
//! The strongest evidence of what matters is the task itself: "fix the rounding in
//! `src/pricing/tax.rs`" or "make `Ledger::reserve` atomic". Matching is plain text search — never a
//! regular expression, so task text full of `*`, `(`, `[` or `\` is just text — and it is
//! case-insensitive (one character folds to one lower-case character).
//!
//! The exact rules:
//! - **A file target** (`src/orders/parser.rs`) is named when the task mentions its file name
//!   (`parser.rs`) as a whole path token. The token is the file name together with the path characters
//!   written right before it (letters, digits, `_`, `-`, `.`, `/`), less a leading `/`, `./` or `../`;
//!   it names the target when it equals the target's path, is a `/`-suffix of it (`orders/parser.rs`,
//!   or the file name alone), or ends with `/` and the target's path (an absolute path). So
//!   `orders/parser.rs` names `src/orders/parser.rs` but not `src/ledger/parser.rs`, and
//!   `foo-parser.rs` names neither. After the file name may come the end of the text, a space, or
//!   punctuation (`parser.rs:40`, `parser.rs.` at the end of a sentence), but not a letter, digit, `_`,
//!   `-`, `/`, or a `.` that continues the name (`parser.rs.bak`). A directory alone
//!   (`src/orders`) names no file, and a file's stem alone (`parser`) does not name it.
//! - **A symbol target** (`src/ledger/mod.rs#Ledger.reserve`) is named by its full dotted name
//!   (`Ledger.reserve`), the same with `::` (`Ledger::reserve`), or its last name component
//!   (`reserve`), each as a whole word: not preceded or followed by a letter, digit or `_`. So
//!   `order` does not name `Order` in "orders", but does in "order's" and "order.total". A name of a
//!   single character (`x`, `a`) is too common a word to count alone, whether it is the last component
//!   or the whole name; `Point.x` still names `Point.x`. Only the symbol names a symbol target: a task
//!   that names a file names the file target, not every symbol in it.

use super::split_target;

/// Task text prepared once for matching against many targets.
#[derive(Debug, Clone)]
pub struct TaskText {
    chars: Vec<char>,
}

impl TaskText {
    /// Prepares `task` for matching.
    pub fn new(task: &str) -> Self {
        TaskText { chars: task.chars().map(fold).collect() }
    }

    /// Whether the task names `target_id` (a path, or `path#symbol`), by the rules of this module.
    pub fn names(&self, target_id: &str) -> bool {
        match split_target(target_id) {
            (path, None) => self.names_path(path),
            (_, Some(symbol)) => self.names_symbol(symbol),
        }
    }

    fn names_path(&self, path: &str) -> bool {
        let file_name = path.rsplit('/').next().unwrap_or_default();
        if file_name.is_empty() {
            return false;
        }
        let path: String = path.chars().map(fold).collect();
        let needle: Vec<char> = file_name.chars().map(fold).collect();
        let text = &self.chars;
        occurrences(text, &needle).any(|start| {
            let end = start + needle.len();
            let right_ok = match text.get(end) {
                None => true,
                Some(&c) if is_word(c) || c == '-' || c == '/' => false,
                Some('.') => !text.get(end + 1).is_some_and(|&c| is_word(c)),
                Some(_) => true,
            };
            if !right_ok {
                return false;
            }
            let mut token_start = start;
            while token_start > 0 && is_path_char(text[token_start - 1]) {
                token_start -= 1;
            }
            let token: String = text[token_start..end].iter().collect();
            let token = strip_leading_relative(&token);
            token == path
                || path.strip_suffix(token).is_some_and(|rest| rest.ends_with('/'))
                || token.strip_suffix(path.as_str()).is_some_and(|rest| rest.ends_with('/'))
        })
    }

    fn names_symbol(&self, symbol: &str) -> bool {
        if symbol.is_empty() {
            return false;
        }
        let last = symbol.rsplit('.').next().unwrap_or_default();
        let mut candidates = Vec::new();
        if symbol.chars().count() > 1 {
            candidates.push(symbol.to_string());
        }
        if symbol.contains('.') {
            candidates.push(symbol.replace('.', "::"));
        }
        if last.chars().count() > 1 && last != symbol {
            candidates.push(last.to_string());
        }
        candidates.iter().any(|candidate| self.contains_word(candidate))
    }

    /// Whether `word` occurs with no word character glued to either end.
    fn contains_word(&self, word: &str) -> bool {
        let needle: Vec<char> = word.chars().map(fold).collect();
        let (Some(&first), Some(&last)) = (needle.first(), needle.last()) else { return false };
        let text = &self.chars;
        occurrences(text, &needle).any(|start| {
            let end = start + needle.len();
            let left_ok = start == 0 || !(is_word(text[start - 1]) && is_word(first));
            let right_ok = end == text.len() || !(is_word(text[end]) && is_word(last));
            left_ok && right_ok
        })
    }
}

/// Whether `task` names `target_id` (see the module docs for the exact rules).
///
/// For many targets, prepare the text once with [`TaskText::new`] and call [`TaskText::names`].
pub fn named_by_task(task: &str, target_id: &str) -> bool {
    TaskText::new(task).names(target_id)
}

/// Lower-cases a character when it has a one-character lower case, so positions never shift.
fn fold(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

fn is_path_char(c: char) -> bool {
    is_word(c) || matches!(c, '-' | '.' | '/')
}

fn strip_leading_relative(mut token: &str) -> &str {
    loop {
        let stripped =
            token.strip_prefix("./").or_else(|| token.strip_prefix("../")).or_else(|| token.strip_prefix('/'));
        match stripped {
            Some(rest) => token = rest,
            None => return token,
        }
    }
}

/// Start positions of `needle` in `text`.
fn occurrences<'a>(text: &'a [char], needle: &'a [char]) -> impl Iterator<Item = usize> + 'a {
    let last_start = if needle.is_empty() { None } else { text.len().checked_sub(needle.len()) };
    last_start.into_iter().flat_map(move |last| (0..=last).filter(move |&i| text[i..i + needle.len()] == *needle))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn file_targets() {
        let table: &[(&str, &str, bool)] = &[
            ("fix src/orders/parser.rs", "src/orders/parser.rs", true),
            ("fix SRC/Orders/Parser.RS please", "src/orders/parser.rs", true),
            ("the bug is in parser.rs:40", "src/orders/parser.rs", true),
            ("look at orders/parser.rs.", "src/orders/parser.rs", true),
            ("look at `./src/orders/parser.rs`", "src/orders/parser.rs", true),
            ("see /home/me/repo/src/orders/parser.rs", "src/orders/parser.rs", true),
            ("(parser.rs)", "src/orders/parser.rs", true),
            ("parser.rs", "src/orders/parser.rs", true),
            ("ledger/parser.rs", "src/orders/parser.rs", false),
            ("foo-parser.rs", "src/orders/parser.rs", false),
            ("myparser.rs", "src/orders/parser.rs", false),
            ("parser.rs.bak", "src/orders/parser.rs", false),
            ("parser.rs-old", "src/orders/parser.rs", false),
            ("parser.rsx", "src/orders/parser.rs", false),
            ("the parser", "src/orders/parser.rs", false),
            ("work in src/orders", "src/orders/parser.rs", false),
            ("ledger/mod.rs", "src/ledger/mod.rs", true),
            ("ledger/mod.rs", "src/orders/mod.rs", false),
            ("orders", "tools/stockcheck/orders.py", false),
            ("orders.py", "tools/stockcheck/orders.py", true),
            ("order.py", "tools/stockcheck/orders.py", false),
            ("edit .gitignore", ".gitignore", true),
            ("anything", "", false),
            ("", "src/lib.rs", false),
        ];
        for &(task, target, want) in table {
            assert_eq!(named_by_task(task, target), want, "task {task:?}, target {target:?}");
        }
    }

    #[test]
    fn symbol_targets() {
        let reserve = "src/ledger/mod.rs#Ledger.reserve";
        let order = "pkg/orders.py#Order";
        let table: &[(&str, &str, bool)] = &[
            ("make Ledger::reserve atomic", reserve, true),
            ("make Ledger.reserve atomic", reserve, true),
            ("reserve() must not overdraw", reserve, true),
            ("RESERVE", reserve, true),
            ("reserved stock", reserve, false),
            ("prereserve", reserve, false),
            ("fix src/ledger/mod.rs", reserve, false),
            ("the order is wrong", order, true),
            ("all orders are wrong", order, false),
            ("the order's total", order, true),
            ("Order.total is wrong", order, true),
            ("reorder the list", order, false),
            ("order_id", order, false),
            ("x is wrong", "geo.rs#Point.x", false),
            ("Point.x is wrong", "geo.rs#Point.x", true),
            ("use x", "geo.rs#x", false),
            ("operator +", "a.rs#Add.+", false),
            ("a <=> b", "a.rs#<=>", true),
            ("anything", "a.rs#", false),
        ];
        for &(task, target, want) in table {
            assert_eq!(named_by_task(task, target), want, "task {task:?}, target {target:?}");
        }
    }

    #[test]
    fn regex_metacharacters_are_plain_text() {
        let task = r"fix (.*) [a-z]+ \d{2} ^$ | parser.rs? src/*.rs C++ ((( reserve\b";
        assert!(named_by_task(task, "src/orders/parser.rs"));
        assert!(!named_by_task(task, "src/lib.rs"));
        // A backslash is not a word character, so `reserve` stands as a whole word there.
        assert!(named_by_task(task, "src/ledger/mod.rs#Ledger.reserve"));
        assert!(!named_by_task(r"reserve_\b", "src/ledger/mod.rs#Ledger.reserve"));
        assert!(named_by_task("use [a-z]+ here", "x.rs#[a-z]+"));
        assert!(named_by_task("regex: .*", "a.rs#.*"));
        assert!(!named_by_task("(((", "src/lib.rs"));
    }

    #[test]
    fn unicode_text_folds_without_shifting() {
        assert!(named_by_task("İ then ÉCOLE.rs", "src/école.rs"));
        assert!(!named_by_task("straße", "a.rs#STRASSE"));
        assert!(named_by_task("Grüße an Größe", "a.rs#größe"));
    }

    proptest! {
        #[test]
        fn never_panics_and_agrees_with_the_prepared_text(task in ".{0,80}", target in ".{0,30}") {
            let prepared = TaskText::new(&task);
            prop_assert_eq!(prepared.names(&target), named_by_task(&task, &target));
        }

        #[test]
        fn a_task_quoting_the_path_names_the_file(path in "[a-z]{1,8}(/[a-z_]{1,8}){0,3}\\.[a-z]{1,3}", noise in "[ (.*+?|^$]{0,5}") {
            let task = format!("{noise} fix {path}{noise}");
            prop_assert!(named_by_task(&task, &path), "{}", task);
        }
    }
}
