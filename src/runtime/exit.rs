//! An exit status in words, one way everywhere a report or a narration shows one.
//!
//! A check or an agent runs under `sh -c`: when the kernel kills the command it runs (the
//! out-of-memory killer, a `kill -9`), the shell reports it as exit 128 + the signal's number —
//! 137 for SIGKILL — and when the shell itself is killed the process has no exit code at all.
//! Neither is a failure the command reported: "exited 137" reads like a test result, and a reader
//! would look for a failing test that never ran. So a status above 128 whose low part names a
//! signal, and a missing status, are described as **killed**, with the signal's name and what
//! usually sends it; a plain code stays `exit N`. A recorded status is kept as recorded (the
//! number, or null): only its words change.

/// The highest signal number a status 128 + N is read as.
const MAX_SIGNAL: i32 = 64;

/// The signal an exit status stands for: `128 + N` (a shell reporting its command killed by
/// signal N), else `None`.
pub fn signal_of(code: i32) -> Option<i32> {
    (code > 128 && code <= 128 + MAX_SIGNAL).then_some(code - 128)
}

/// A signal's name and what usually sends it, e.g. `SIGKILL: out of memory or killed`.
pub fn signal_words(signal: i32) -> String {
    let known = match signal {
        1 => Some("SIGHUP: its terminal or session ended"),
        2 => Some("SIGINT: interrupted"),
        3 => Some("SIGQUIT: quit"),
        6 => Some("SIGABRT: it aborted"),
        9 => Some("SIGKILL: out of memory or killed"),
        11 => Some("SIGSEGV: it crashed"),
        13 => Some("SIGPIPE: its reader went away"),
        15 => Some("SIGTERM: terminated"),
        _ => None,
    };
    known.map_or_else(|| format!("signal {signal}"), str::to_owned)
}

/// An exit status as a noun phrase: `exit 1`; `killed (SIGKILL: out of memory or killed; exit
/// 137)`; for no status (a signal, or the timeout's kill) `killed (by a signal or the timeout)`.
pub fn exit_words(code: Option<i32>) -> String {
    match code {
        Some(code) => match signal_of(code) {
            Some(signal) => format!("killed ({}; exit {code})", signal_words(signal)),
            None => format!("exit {code}"),
        },
        None => "killed (by a signal or the timeout)".to_owned(),
    }
}

/// An exit status after a subject (`the check …`): `exited 1`; `was killed (SIGKILL: out of
/// memory or killed; exit 137)`; `was killed (by a signal or the timeout)`.
pub fn exited(code: Option<i32>) -> String {
    match code {
        Some(code) if signal_of(code).is_none() => format!("exited {code}"),
        _ => format!("was {}", exit_words(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_status_above_128_is_a_kill_and_names_its_signal() {
        let table: &[(Option<i32>, &str, &str)] = &[
            (Some(0), "exit 0", "exited 0"),
            (Some(1), "exit 1", "exited 1"),
            (Some(128), "exit 128", "exited 128"),
            (
                Some(137),
                "killed (SIGKILL: out of memory or killed; exit 137)",
                "was killed (SIGKILL: out of memory or killed; exit 137)",
            ),
            (Some(143), "killed (SIGTERM: terminated; exit 143)", "was killed (SIGTERM: terminated; exit 143)"),
            (Some(170), "killed (signal 42; exit 170)", "was killed (signal 42; exit 170)"),
            (Some(200), "exit 200", "exited 200"),
            (None, "killed (by a signal or the timeout)", "was killed (by a signal or the timeout)"),
        ];
        for (code, words, verb) in table {
            assert_eq!((exit_words(*code).as_str(), exited(*code).as_str()), (*words, *verb), "{code:?}");
        }
    }
}
