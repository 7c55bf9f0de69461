//! The gate's recent denials: who was refused whose file, and when — what `git mas status` reads
//! to say who waits on whom, and what the edit hook reads to name a deadlock in its refusal.
//!
//! A denial is not a signed record: it says what one machine's gate answered, it is read by that
//! machine only, and it must cost a refused edit next to nothing. So it is one line of JSON
//! appended to `<common git dir>/mas/denials.log` (`{"at":…,"agent":…,"holder":…,"file":…}`),
//! shared by every worktree. The log is bounded: once it passes [`MAX_BYTES`], the writer that
//! noticed keeps the newest half (a temporary file renamed over it). Lines appended by another
//! process during that rewrite may be lost; a line that does not parse (a torn write) is skipped.
//! Both cost a waiting agent's count a step, never a verdict: the gate decides from the board
//! alone, and a failure to write the log changes no answer.
//!
//! What a SIGKILL leaves: an append is one `write` of whole lines (at most a torn last line,
//! skipped by readers, and the next append starts on a line of its own); a rewrite is a temporary file (`denials.log.tmp.<pid>`, never read) and a
//! rename.

use super::board::Board;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The log's path under the common git dir.
pub const FILE: &str = "mas/denials.log";

/// The size past which the log keeps only its newest half.
pub const MAX_BYTES: u64 = 256 * 1024;

/// How far back a denial still says an agent waits (if the file is still held).
pub const WAITING_WINDOW_SECS: u64 = 30 * 60;

/// One refusal of the gate.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Denial {
    /// Unix seconds.
    pub at: u64,
    /// The agent refused.
    pub agent: String,
    /// The agent holding the file.
    pub holder: String,
    /// The file (repository-relative).
    pub file: String,
}

fn path_of(common_dir: &Path) -> PathBuf {
    common_dir.join(FILE)
}

/// Appends `denials` to the log (best effort: an error is returned for the caller to ignore or
/// report, and changes no verdict).
pub fn record(common_dir: &Path, denials: &[Denial]) -> std::io::Result<()> {
    if denials.is_empty() {
        return Ok(());
    }
    let path = path_of(common_dir);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut lines = Vec::new();
    for d in denials {
        serde_json::to_writer(&mut lines, d).map_err(std::io::Error::other)?;
        lines.push(b'\n');
    }
    let mut file = std::fs::OpenOptions::new().create(true).append(true).read(true).open(&path)?;
    // After a torn last line (a writer killed mid-line), start on a line of our own.
    let len = file.metadata()?.len();
    let mut last = [b'\n'];
    if len > 0 {
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut last, len - 1)?;
    }
    if last[0] != b'\n' {
        lines.insert(0, b'\n');
    }
    file.write_all(&lines)?;
    if file.metadata()?.len() > MAX_BYTES {
        trim(&path)?;
    }
    Ok(())
}

/// Keeps the newest half of the log (whole lines).
fn trim(path: &Path) -> std::io::Result<()> {
    let bytes = std::fs::read(path)?;
    let half = bytes.len() / 2;
    let start = bytes[half..].iter().position(|&b| b == b'\n').map_or(bytes.len(), |i| half + i + 1);
    crate::fsx::write_atomic(path, &bytes[start..], None)
}

/// Every denial in the log, oldest first; lines that do not parse are skipped.
pub fn read(common_dir: &Path) -> Vec<Denial> {
    let Ok(bytes) = std::fs::read(path_of(common_dir)) else { return Vec::new() };
    bytes.split(|&b| b == b'\n').filter_map(|line| serde_json::from_slice(line).ok()).collect()
}

/// The denials of `agents` refused a file `holder` holds, oldest first: what a refusal of
/// `holder` reads to find a deadlock (each agent it is refused by, waiting on it in turn).
///
/// The log is up to [`MAX_BYTES`], and this runs on every refused edit of a session that holds
/// files: it is read through one 16 KiB buffer, a line at a time into one reused line buffer, and
/// only the lines holding one of the pairs as [`record`] writes them (`"agent":A,"holder":H,`)
/// are parsed, not the whole log into memory (up to 64 pages faulted in and parsed per call,
/// measured in BENCHMARKS.md, "The hook's own binary").
pub fn refusals_of(common_dir: &Path, agents: &[&str], holder: &str) -> Vec<Denial> {
    use std::io::BufRead as _;
    let Ok(file) = std::fs::File::open(path_of(common_dir)) else { return Vec::new() };
    let Ok(holder_json) = serde_json::to_string(holder) else { return Vec::new() };
    let needles: Vec<Vec<u8>> = agents
        .iter()
        .filter_map(|a| serde_json::to_string(a).ok())
        .map(|a| format!("\"agent\":{a},\"holder\":{holder_json},").into_bytes())
        .collect();
    let finders: Vec<memchr::memmem::Finder<'_>> = needles.iter().map(memchr::memmem::Finder::new).collect();
    let mut reader = std::io::BufReader::with_capacity(16 * 1024, file);
    let (mut line, mut found) = (Vec::new(), Vec::new());
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return found,
            Ok(_) => {}
        }
        if finders.iter().any(|f| f.find(&line).is_some())
            && let Ok(d) = serde_json::from_slice::<Denial>(line.trim_ascii_end())
            && d.holder == holder
            && agents.contains(&d.agent.as_str())
        {
            found.push(d);
        }
    }
}

/// An agent waiting on another: refused a file the other still holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    /// The agent refused.
    pub agent: String,
    /// The holder.
    pub holder: String,
    /// The file.
    pub file: String,
    /// How many times it was refused, within the window.
    pub times: usize,
    /// The first and the last refusal, unix seconds.
    pub since: u64,
    /// The last refusal.
    pub last: u64,
}

/// Who waits on whom now: the denials of the last [`WAITING_WINDOW_SECS`] whose agent is live or
/// has no focus yet (not ended or lapsed) and whose file the holder still holds on `board`,
/// grouped by (agent, holder, file), sorted by agent then file.
pub fn waiting(denials: &[Denial], board: &Board, now: u64) -> Vec<Waiting> {
    let holds = |holder: &str, file: &str| {
        board.live().any(|f| f.agent == holder && f.targets.iter().any(|t| super::claims::file_of(t) == file))
    };
    let gone = |agent: &str| board.entry(agent).is_some_and(|e| e.liveness != super::board::Liveness::Live);
    let mut grouped: BTreeMap<(String, String, String), Waiting> = BTreeMap::new();
    for d in denials.iter().filter(|d| d.at.saturating_add(WAITING_WINDOW_SECS) >= now) {
        if gone(&d.agent) || !holds(&d.holder, &d.file) {
            continue;
        }
        let w = grouped.entry((d.agent.clone(), d.file.clone(), d.holder.clone())).or_insert_with(|| Waiting {
            agent: d.agent.clone(),
            holder: d.holder.clone(),
            file: d.file.clone(),
            times: 0,
            since: d.at,
            last: d.at,
        });
        w.times += 1;
        w.since = w.since.min(d.at);
        w.last = w.last.max(d.at);
    }
    grouped.into_values().collect()
}

/// Two agents each waiting on a file the other holds: `(a, b)` with `a < b`, each pair once.
pub fn deadlocks(waiting: &[Waiting]) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> =
        waiting
            .iter()
            .filter(|w| waiting.iter().any(|v| v.agent == w.holder && v.holder == w.agent))
            .map(|w| {
                if w.agent < w.holder {
                    (w.agent.clone(), w.holder.clone())
                } else {
                    (w.holder.clone(), w.agent.clone())
                }
            })
            .collect();
    pairs.sort();
    pairs.dedup();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attention::board::{BoardEntry, Liveness};
    use crate::attention::rule::Focus;

    fn board(entries: &[(&str, &[&str], Liveness)]) -> Board {
        let entries = entries
            .iter()
            .map(|(agent, targets, liveness)| BoardEntry {
                focus: Focus {
                    agent: agent.to_string(),
                    frame: "f".into(),
                    seq: 1,
                    targets: targets.iter().map(|t| t.to_string()).collect(),
                },
                liveness: *liveness,
                expires_at: 0,
                published_at: 0,
                run: None,
                ended_with: None,
                commit: String::new(),
            })
            .collect();
        Board { entries, ..Board::default() }
    }

    fn denial(at: u64, agent: &str, holder: &str, file: &str) -> Denial {
        Denial { at, agent: agent.into(), holder: holder.into(), file: file.into() }
    }

    #[test]
    fn waiting_counts_recent_denials_of_files_still_held_by_live_agents() {
        let now = 10_000;
        let b = board(&[
            ("a", &["f.rs"], Liveness::Live),
            ("b", &["g.rs#S.m"], Liveness::Live),
            ("c", &["h.rs"], Liveness::Released),
        ]);
        let log = [
            denial(now - 100, "b", "a", "f.rs"),
            denial(now - 50, "b", "a", "f.rs"),
            denial(now - WAITING_WINDOW_SECS - 1, "b", "a", "f.rs"), // too old
            denial(now - 10, "a", "b", "g.rs"),                      // a symbol claim holds its file
            denial(now - 10, "d", "c", "h.rs"),                      // c released: nobody waits
            denial(now - 10, "c", "a", "f.rs"),                      // c ended: it waits no more
            denial(now - 10, "d", "a", "other.rs"),                  // a does not hold it
        ];
        let w = waiting(&log, &b, now);
        let got: Vec<(&str, &str, &str, usize, u64, u64)> = w
            .iter()
            .map(|w| (w.agent.as_str(), w.holder.as_str(), w.file.as_str(), w.times, w.since, w.last))
            .collect();
        assert_eq!(got, [("a", "b", "g.rs", 1, now - 10, now - 10), ("b", "a", "f.rs", 2, now - 100, now - 50)]);
        assert_eq!(deadlocks(&w), [("a".to_string(), "b".to_string())]);
        assert!(deadlocks(&w[1..]).is_empty(), "one way is waiting, not a deadlock");
    }

    #[test]
    fn a_refusals_lookup_finds_exactly_the_pairs_read_finds() {
        let dir = tempfile::tempdir().unwrap();
        let log = vec![
            denial(1, "b", "a", "f.rs"),
            denial(2, "c", "a", "g.rs"),
            denial(3, "a", "b", "h.rs"),
            denial(4, "b\"x", "a", "q.rs"), // a name needing escapes
            denial(5, "b", "ab", "f.rs"),   // another holder whose name starts alike
            denial(6, "b", "a", "k.rs"),
        ];
        record(dir.path(), &log).unwrap();
        // A torn line in the middle is skipped, and the next append starts a line of its own.
        let path = dir.path().join(FILE);
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"at\":7,\"agent\":\"b\",\"holder\":\"a\",\"fi").unwrap();
        record(dir.path(), &[denial(8, "b", "a", "m.rs")]).unwrap();
        let all = read(dir.path());
        for (agents, holder) in
            [(&["b"][..], "a"), (&["b", "c"], "a"), (&["b\"x"], "a"), (&["a"], "b"), (&["z"], "a"), (&["b"], "ab")]
        {
            let want: Vec<Denial> =
                all.iter().filter(|d| d.holder == holder && agents.contains(&d.agent.as_str())).cloned().collect();
            assert_eq!(refusals_of(dir.path(), agents, holder), want, "{agents:?} {holder}");
        }
        assert_eq!(refusals_of(dir.path(), &["b"], "a").iter().map(|d| d.at).collect::<Vec<_>>(), [1, 6, 8]);
        assert!(refusals_of(&dir.path().join("none"), &["b"], "a").is_empty());
    }

    #[test]
    fn the_log_appends_skips_torn_lines_and_keeps_its_newest_half() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), &[denial(1, "a", "b", "f")]).unwrap();
        // A torn line from a writer killed mid-line, then more appends.
        std::fs::OpenOptions::new().append(true).open(dir.path().join(FILE)).unwrap().write_all(b"{\"at\":2,").unwrap();
        record(dir.path(), &[denial(3, "a", "b", "g")]).unwrap();
        let got: Vec<u64> = read(dir.path()).iter().map(|d| d.at).collect();
        assert_eq!(got, [1, 3], "the torn line is skipped, the next is whole");
        record(dir.path(), &[denial(4, "a", "b", "h")]).unwrap();
        assert_eq!(read(dir.path()).last().map(|d| d.at), Some(4));
        // Past the bound: the newest half stays, in order, every line whole.
        let many: Vec<Denial> = (10..20_000).map(|i| denial(i, "agent", "holder", "src/some/file.rs")).collect();
        for chunk in many.chunks(500) {
            record(dir.path(), chunk).unwrap();
        }
        let size = std::fs::metadata(dir.path().join(FILE)).unwrap().len();
        assert!(size <= MAX_BYTES, "{size}");
        let kept = read(dir.path());
        assert_eq!(kept.last().map(|d| d.at), Some(19_999));
        assert!(kept.windows(2).all(|w| w[0].at < w[1].at) && kept.len() > 1_000, "{}", kept.len());
    }
}
