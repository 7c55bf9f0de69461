//! `git mas report --html`: the run's page, opened in a real headless browser (Debian's
//! `chromium`, installed by tests/setup.sh). The DOM must hold every round, proposal, endorsement
//! and the landing the run's own JSON lists; the browser's every request goes to a proxy the test
//! holds, which must see none; and a phone-width screenshot is kept under the test's output
//! folder (`<target>/tmp/test-output/report_html/<test>/`).

use crate::aggregate;
use crate::common::*;
use crate::json::log::LoggedChain;
use serde_json::Value;
use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long the browser has for one page before the test fails instead of hanging.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// Where a test keeps what a person may want to look at afterwards (screenshots): kept after the
/// run, emptied at the start of the test.
fn output_folder(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("test-output").join("report_html").join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Hosts the browser contacts on its own at start-up whatever the page (its component updater,
/// sign-in and clock services), which no flag of Debian's build turns off. A request to them is
/// not the page's: [`assert_self_contained`] checks that the page names no host at all.
const BROWSER_OWN: [&str; 4] = ["google.com", "googleapis.com", "gvt1.com", "gstatic.com"];

/// A proxy that answers nothing: it keeps the host of every request the browser makes and closes
/// each connection at once (so a page that does fetch fails fast instead of waiting on it).
struct Trap {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The host a proxy request names: `CONNECT host:443 …` or `GET http://host/… …`.
fn requested_host(request: &str) -> String {
    let target = request.split_whitespace().nth(1).unwrap_or_default();
    let rest = target.split_once("://").map_or(target, |(_, r)| r);
    let authority = rest.split('/').next().unwrap_or_default();
    authority.rsplit_once(':').map_or(authority, |(h, _)| h).to_owned()
}

impl Trap {
    fn new() -> Trap {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (seen, stop) = (Arc::new(Mutex::new(Vec::new())), Arc::new(AtomicBool::new(false)));
        let (s, st) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !st.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut conn, _)) => {
                        let _ = conn.set_nonblocking(false);
                        let _ = conn.set_read_timeout(Some(Duration::from_millis(500)));
                        let mut head = [0u8; 1024];
                        let n = conn.read(&mut head).unwrap_or(0);
                        let line = String::from_utf8_lossy(&head[..n]).lines().next().unwrap_or("").to_owned();
                        s.lock().unwrap().push(requested_host(&line));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        Trap { port, seen, stop, thread: Some(thread) }
    }

    /// The hosts requested so far that are not the browser's own (after a last look at the
    /// listener's backlog).
    fn requests(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(100));
        let own = |h: &str| BROWSER_OWN.iter().any(|d| h == *d || h.ends_with(&format!(".{d}")));
        self.seen.lock().unwrap().iter().filter(|h| !own(h)).cloned().collect()
    }
}

impl Drop for Trap {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Chromium, headless, on `page` with `flags`: every request it makes goes to `trap`'s proxy
/// (loopback included). Returns its stdout; fails the test when it does not end in time.
fn chromium(env: &TestEnv, trap: &Trap, page: &Path, flags: &[String]) -> String {
    let profile = tempfile::Builder::new().prefix("chromium").tempdir_in(env.root()).unwrap();
    let mut cmd = Command::new("chromium");
    env.hermetic(&mut cmd);
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.path().display()))
    .arg(format!("--proxy-server=127.0.0.1:{}", trap.port))
    .arg("--proxy-bypass-list=<-loopback>")
    .args(flags)
    .arg(format!("file://{}", page.display()))
    .stdin(Stdio::null())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = GroupChild::spawn(&mut cmd).expect("chromium runs (tests/setup.sh installs it)");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > BROWSER_TIMEOUT {
            drop(child);
            panic!("chromium did not finish {} within {BROWSER_TIMEOUT:?}", page.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    // The browser's helpers may hold the pipes open a little longer; the group goes with `child`.
    drop(child);
    let stdout = reader.join().unwrap();
    let stderr = err_reader.join().unwrap();
    assert!(status.success(), "chromium failed ({status}) on {}: {stderr}", page.display());
    stdout
}

/// The page's DOM as the browser built it.
fn dom(env: &TestEnv, trap: &Trap, page: &Path) -> String {
    let dom = chromium(env, trap, page, &["--dump-dom".to_owned()]);
    assert!(dom.contains("</html>"), "no DOM: {dom}");
    dom
}

/// What a page must never hold: a script, or anything that would fetch from elsewhere.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    assert!(!lower.contains("<script"), "a script in the page");
    for needle in ["src=\"http", "href=\"http", "src='http", "href='http", "url(", "@import", "<link", "<iframe"] {
        assert!(!lower.contains(needle), "the page holds {needle:?}");
    }
    // No host named anywhere (the SVG namespace is a name, never fetched).
    let urls = lower.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    assert!(!urls.contains("://") && !urls.contains("//www."), "the page names a URL");
    assert!(
        html.contains(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; \
             img-src data:\">"
        ),
        "no Content-Security-Policy"
    );
}

/// The start tag of the element with `id` in `html`.
fn tag_with_id<'a>(html: &'a str, id: &str) -> &'a str {
    let at = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no element with id {id}"));
    let start = html[..at].rfind('<').unwrap();
    let end = at + html[at..].find('>').unwrap();
    &html[start..=end]
}

/// A PNG's width and height, from its IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let be = |at: usize| u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
    (be(16), be(20))
}

#[test]
fn a_landed_aggregate_run_reads_whole_in_a_headless_browser_that_requests_nothing() {
    let env = TestEnv::new();
    let shots = output_folder("aggregate");
    let repo = aggregate::setup(&env, &["alice", "bob", "carol"]);
    let agents: Vec<String> = ["alice", "bob", "carol"].iter().map(|a| aggregate::agent(&env, a, "slice")).collect();
    let out = aggregate::coordinate(&env, &repo, &agents, &["--quorum", "2"]);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    let run = out.events("run-started")[0]["run"].as_str().unwrap().to_string();

    let page = env.root().join("run.html");
    let printed = env.mas_ok(&repo, &["report", &run, "--html", page.to_str().unwrap()]);
    assert_eq!(printed, format!("{}\n", page.display()), "the path written is printed");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    // The last run by default, and the same page on stdout with `-`.
    let default = env.root().join("default.html");
    env.mas_quiet_ok(&repo, &["report", "--html", default.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&default).unwrap(), html, "the default run is this one");
    assert_eq!(env.mas_ok(&repo, &["report", &run, "--html", "-"]), html);
    let json: Value =
        serde_json::from_str(&env.mas_ok(&repo, &["report", &run, "--html", page.to_str().unwrap(), "--json"]))
            .unwrap();
    assert_eq!(json["html"], page.to_str().unwrap());

    // What the run's own JSON lists: its rounds, its proposals and endorsements, its landing.
    let report: Value = serde_json::from_str(&env.mas_ok(&repo, &["report", &run, "--json"])).unwrap();
    let shown: Value = serde_json::from_str(&env.mas_ok(&repo, &["run", "show", &run, "--json"])).unwrap();
    let landing = shown["phase"]["landing"]["commit"].as_str().unwrap_or_else(|| panic!("{shown:#}")).to_string();
    assert_eq!(landing, env.git(&repo, &["rev-parse", "main"]));
    let chains: Vec<LoggedChain> = serde_json::from_str(&env.mas_ok(&repo, &["log", "--json"])).unwrap();
    let prefix = format!("refs/mas/runs/{run}/events/");
    let records: Vec<_> = chains.iter().filter(|c| c.refname.starts_with(&prefix)).flat_map(|c| &c.records).collect();
    let ids = |kind: &str| -> Vec<(String, u64)> {
        records
            .iter()
            .filter(|r| r.kind.as_deref() == Some(kind))
            .map(|r| {
                let meta = &r.payload.as_ref().unwrap()["event"]["metadata"];
                (meta["event_id"].as_str().unwrap().to_string(), meta["epoch"].as_u64().unwrap())
            })
            .collect()
    };
    let (proposals, endorsements) = (ids("proposal"), ids("endorsement"));
    assert_eq!(proposals.len(), 3, "one proposal a slice: {records:?}");
    assert!(endorsements.len() >= 6, "two endorsements a slice at least: {records:?}");
    let rounds = report["rounds_state"]["used"].as_u64().unwrap();
    assert!(rounds >= 1);

    let trap = Trap::new();
    let dom = dom(&env, &trap, &page);
    std::fs::write(shots.join("run.html"), &html).unwrap();
    std::fs::write(shots.join("dom.html"), &dom).unwrap();
    for round in 1..=rounds {
        assert!(dom.contains(&format!("<section class=\"round\" data-round=\"{round}\">")), "round {round}");
    }
    for (id, epoch) in proposals.iter().chain(&endorsements) {
        // Events count epochs from 0; people count rounds from 1.
        assert!(*epoch < rounds, "{id} in epoch {epoch} of {rounds} rounds");
    }
    for (id, _) in &proposals {
        assert!(dom.contains(&format!("data-proposal=\"{id}\"")), "proposal {id} is not on the page");
    }
    for (id, _) in &endorsements {
        assert!(dom.contains(&format!("data-endorsement=\"{id}\"")), "endorsement {id} is not on the page");
    }
    let landed = tag_with_id(&dom, "landing");
    assert!(landed.contains(&format!("data-commit=\"{landing}\"")), "{landed}");
    assert!(dom.contains("<th>Mas-Termination</th><td>quality_reached</td>"), "the landing's trailers");
    assert!(dom.contains("<svg class=\"timeline\"") && dom.contains("<svg class=\"board\""), "the pictures");
    assert!(dom.contains("fix the bugs"), "the goal");

    // A phone-width screenshot.
    let shot = shots.join("report.png");
    chromium(&env, &trap, &page, &[format!("--screenshot={}", shot.display()), "--window-size=390,2000".to_owned()]);
    let png = std::fs::read(&shot).unwrap_or_else(|e| panic!("no screenshot at {}: {e}", shot.display()));
    assert_eq!(png_size(&png), (390, 2000));
    assert!(png.len() > 20_000, "a screenshot of a blank page? {} bytes", png.len());
    assert_eq!(trap.requests(), Vec::<String>::new(), "the browser made a request for the page");
}

#[test]
fn the_proxy_trap_sees_a_page_that_does_fetch() {
    // The check above means something only if a request would reach the trap.
    let env = TestEnv::new();
    let page = env.root().join("fetching.html");
    std::fs::write(&page, "<!DOCTYPE html><html><body><img src=\"http://example.invalid/pixel.png\"></body></html>")
        .unwrap();
    let trap = Trap::new();
    let _ = dom(&env, &trap, &page);
    assert_eq!(trap.requests(), ["example.invalid"], "the trap saw no request from a page that fetches an image");
}

#[test]
fn markup_in_a_goal_a_message_and_check_output_stays_inert_text() {
    let env = TestEnv::new();
    let repo = env.team(&["alice", "bob"]).build().repo;
    let goal = "<script>document.title='owned'</script> & \"quotes\"";
    let check = "echo '<script>alert(1)</script><img src=x onerror=alert(2)>'; exit 1";
    let as_agent = |dir: &Path, agent: &str, args: &[&str]| {
        let mut all = vec!["--agent", agent];
        all.extend_from_slice(args);
        env.mas(dir, &all)
    };
    let started = as_agent(
        &repo,
        "alice",
        &["run", "start", "--id", "hostile", "--goal", goal, "--check", check, "--quorum", "1"],
    );
    assert!(started.status.success(), "{}", stderr(&started));
    let worktree = |agent: &str| {
        let out = as_agent(&repo, agent, &["worktree", "add", agent, "--run", "hostile"]);
        assert!(out.status.success(), "{}", stderr(&out));
        PathBuf::from(stdout(&out).trim())
    };
    let (a, b) = (worktree("alice"), worktree("bob"));
    std::fs::write(a.join("status.txt"), "ok\n").unwrap();
    env.mas_quiet_ok(&a, &["propose", "-m", "<b onmouseover=alert(3)>bold</b>"]);
    let endorsed = env.mas(&b, &["endorse", "alice"]);
    assert_eq!(endorsed.status.code(), Some(9), "the check fails: {}", stderr(&endorsed));

    let page = env.root().join("hostile.html");
    env.mas_quiet_ok(&repo, &["report", "hostile", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("&lt;script&gt;document.title=&#39;owned&#39;&lt;/script&gt; &amp; &quot;quotes&quot;"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"), "the output");
    assert!(html.contains("&lt;b onmouseover=alert(3)&gt;bold&lt;/b&gt;"), "the message");

    let trap = Trap::new();
    let dom = dom(&env, &trap, &page);
    let lower = dom.to_ascii_lowercase();
    for element in ["<script", "<img", "<b "] {
        assert!(!lower.contains(element), "{element} became an element");
    }
    assert!(dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "the output is shown as text");
    assert!(dom.contains("data-verdict=\"failed\""), "the failed check is marked");
    assert_eq!(trap.requests(), Vec::<String>::new());
}

#[test]
fn a_converge_run_embeds_its_plot() {
    let env = TestEnv::new();
    let repo = env.team(&["alice"]).named("pref").build().repo;
    let agents = "builtin:reference,builtin:reference,builtin:reference";
    let out = env
        .mas_cmd(&repo)
        .args(["--agent", "alice", "converge", "--json", "--pattern", "preference", "--agents", agents])
        .args(["--max-rounds", "12"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let last: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    let report = &last["report"];
    let run = report["run"].as_str().unwrap();

    let page = env.root().join("converge.html");
    env.mas_quiet_ok(&repo, &["report", run, "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);
    assert!(html.contains("<svg class=\"plot\""), "the plot is embedded");
    assert!(html.contains("<polyline"), "with its lines");
    assert_eq!(
        html.matches("<tr class=\"hop\"").count() as u64,
        report["hops"].as_u64().unwrap(),
        "every recorded hop"
    );

    let trap = Trap::new();
    let dom = dom(&env, &trap, &page);
    std::fs::write(output_folder("converge").join("converge.html"), &html).unwrap();
    assert!(dom.contains("<svg class=\"plot\"") && dom.contains("<polyline"), "the plot's lines are in the DOM");
    assert_eq!(trap.requests(), Vec::<String>::new());
}

#[test]
fn a_page_for_a_missing_folder_is_refused_with_a_hint() {
    let env = TestEnv::new();
    let repo = env.repo("nofolder");
    let out = env.mas(&repo, &["report", "--html", "no/such/folder/run.html"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("--html: the folder no/such/folder does not exist"), "{err}");
    assert!(err.contains("mkdir -p no/such/folder"), "{err}");
    assert!(!repo.join("no").exists());

    let out = env.mas(&repo, &["report", "--html", "-", "--json"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}
