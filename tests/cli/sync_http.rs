//! A team syncing through git's smart HTTP: `git http-backend` behind lighttpd (Debian's package,
//! installed by tests/setup.sh), with HTTP basic authentication against an htpasswd file — the
//! way a hosting service or a team's own server serves git. Nothing lost under contention, a wrong
//! or missing password named as such (and never printed), and a server that refuses custom refs
//! named at once, with what it said, not retried ten times.

use crate::common::*;
use crate::sync::{Tally, append, assert_nothing_lost, mas_refs, sorted_ns, sync_loop};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The one user the server knows, and its password.
const USER: &str = "alice";
const PASSWORD: &str = "s3cret-pw";

/// lighttpd serving every bare repository under `<root>/served` at `/git/`, through
/// `git http-backend`, for authenticated users only; stopped (its process group killed) when dropped.
pub struct HttpRemote {
    child: std::process::Child,
    port: u16,
    served: PathBuf,
}

/// The lighttpd binary: on PATH, or where Debian puts it.
fn lighttpd() -> PathBuf {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("lighttpd"))
        .find(|p| p.is_file());
    on_path.unwrap_or_else(|| {
        let debian = PathBuf::from("/usr/sbin/lighttpd");
        assert!(debian.is_file(), "lighttpd is not installed: run tests/setup.sh (it installs Debian's lighttpd)");
        debian
    })
}

impl HttpRemote {
    pub fn start(env: &TestEnv) -> HttpRemote {
        let dir = env.root().join("http");
        let served = env.root().join("served");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&served).unwrap();
        // An htpasswd line in Apache's MD5 form, as `htpasswd` writes it.
        let hash = std::process::Command::new("openssl").args(["passwd", "-apr1", PASSWORD]).output().unwrap();
        assert!(hash.status.success(), "openssl passwd: {}", String::from_utf8_lossy(&hash.stderr));
        std::fs::write(dir.join("htpasswd"), format!("{USER}:{}", String::from_utf8_lossy(&hash.stdout))).unwrap();
        let exec_path = env.git(env.root(), &["--exec-path"]);
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let conf = format!(
            r#"server.document-root = "{dir}"
server.bind = "127.0.0.1"
server.port = {port}
server.modules = ("mod_access", "mod_alias", "mod_auth", "mod_authn_file", "mod_cgi", "mod_setenv")
server.errorlog = "{dir}/error.log"
alias.url = ( "/git/" => "{exec_path}/git-http-backend/" )
$HTTP["url"] =~ "^/git/" {{
  cgi.assign = ( "" => "" )
  setenv.set-environment = ( "GIT_PROJECT_ROOT" => "{served}", "GIT_HTTP_EXPORT_ALL" => "1" )
  auth.backend = "htpasswd"
  auth.backend.htpasswd.userfile = "{dir}/htpasswd"
  auth.require = ( "" => ( "method" => "basic", "realm" => "git", "require" => "valid-user" ) )
}}
"#,
            dir = dir.display(),
            served = served.display(),
        );
        std::fs::write(dir.join("lighttpd.conf"), conf).unwrap();
        let mut cmd = std::process::Command::new(lighttpd());
        env.hermetic(&mut cmd);
        cmd.arg("-D")
            .arg("-f")
            .arg(dir.join("lighttpd.conf"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .process_group(0);
        let child = cmd.spawn().expect("start lighttpd");
        let remote = HttpRemote { child, port, served };
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            let log = std::fs::read_to_string(dir.join("error.log")).unwrap_or_default();
            assert!(Instant::now() < deadline, "lighttpd did not listen on {port}: {log}");
            std::thread::sleep(Duration::from_millis(20));
        }
        remote
    }

    /// The URL of `repo`, without credentials.
    fn url(&self, repo: &str) -> String {
        format!("http://127.0.0.1:{}/git/{repo}", self.port)
    }

    /// The URL of `repo` with `password` in it.
    fn url_with(&self, repo: &str, password: &str) -> String {
        format!("http://{USER}:{password}@127.0.0.1:{}/git/{repo}", self.port)
    }
}

impl Drop for HttpRemote {
    fn drop(&mut self) {
        let _ = kill_group_and_wait(self.child.id());
        let _ = self.child.wait();
    }
}

/// A credential helper that answers `password` for every request, as a team's stored token does.
fn helper(password: &str) -> String {
    format!("!f() {{ test \"$1\" = get && printf 'username={USER}\\npassword={password}\\n'; }}; f")
}

/// A served bare repository `team.git` holding `seed`'s main (a fixture repository with `names`
/// on its roster), and a clone of it per name, each with the credential helper.
pub fn served_team(env: &TestEnv, http: &HttpRemote, names: &[&str]) -> (PathBuf, Vec<PathBuf>) {
    let remote = http.served.join("team.git");
    env.git_quiet_ok(env.root(), &["init", "--quiet", "--bare", "-b", "main", remote.to_str().unwrap()]);
    let seed = env.repo("seed");
    env.agents(&seed, names);
    let url = http.url("team.git");
    let with_helper = format!("credential.helper={}", helper(PASSWORD));
    env.git_quiet_ok(&seed, &["-c", &with_helper, "push", "--quiet", &url, "main"]);
    let clones = names
        .iter()
        .map(|n| {
            let dir = env.root().join(n);
            env.git_quiet_ok(env.root(), &["-c", &with_helper, "clone", "--quiet", &url, dir.to_str().unwrap()]);
            env.git_quiet_ok(&dir, &["config", "credential.helper", &helper(PASSWORD)]);
            dir
        })
        .collect();
    (remote, clones)
}

#[test]
fn a_team_syncing_through_authenticated_smart_http_loses_nothing() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let names = ["alice", "bob", "carol"];
    let (remote, clones) = served_team(&env, &http, &names);
    let tallies: Vec<Tally> = sync_loop(&env, &clones, &names, Duration::from_secs(8));
    assert_nothing_lost(&env, &clones, &names, &tallies, &remote);
    let syncs: usize = tallies.iter().map(|t| t.codes.len()).sum();
    let fives: usize = tallies.iter().map(|t| t.codes.iter().filter(|&&c| c == 5).count()).sum();
    eprintln!("{fives} of {syncs} syncs through smart HTTP exited 5");
    assert!(syncs >= 3, "{syncs} syncs");
    // The exchange went through the web server: its refs are the served repository's own.
    assert!(mas_refs(&env, &remote).contains("refs/mas/shared/x"), "{}", mas_refs(&env, &remote));
}

#[test]
fn a_wrong_or_missing_password_is_named_and_never_printed_and_nothing_changes() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let (_, clones) = served_team(&env, &http, &["alice"]);
    let a = &clones[0];
    append(&env, a, "alice", None, 1);
    let before = env.refs(a);

    // A stored credential that is wrong.
    env.git_quiet_ok(a, &["config", "credential.helper", &helper("not-the-password")]);
    let out = env.mas(a, &["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    let err = stderr(&out);
    assert!(err.contains("Authentication failed"), "{err}");
    assert!(err.contains("Hint: the remote did not accept the credentials git gave it"), "{err}");
    assert_eq!(env.refs(a), before, "a refused sync changes no ref");

    // No credential at all: git cannot ask (no terminal), and says so at once.
    env.git_quiet_ok(a, &["config", "--unset", "credential.helper"]);
    let started = Instant::now();
    let out = env.mas(a, &["sync"]);
    assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
    assert!(started.elapsed() < Duration::from_secs(20), "it did not wait on a prompt");
    assert!(stderr(&out).contains("Hint: git has no credentials for the remote and cannot ask"), "{}", stderr(&out));

    // A password in the URL: a wrong one is named, and neither is ever printed.
    for json in [false, true] {
        let url = http.url_with("team.git", "wr0ng-pw");
        let mut args = vec!["sync", url.as_str()];
        if json {
            args.push("--json");
        }
        let out = env.mas(a, &args);
        assert_eq!(out.status.code(), Some(1), "{}", shown(&out));
        let all = shown(&out);
        assert!(!all.contains("wr0ng-pw"), "the password is printed: {all}");
        assert!(all.contains(&format!("http://{USER}:<redacted>@127.0.0.1")), "{all}");
        assert!(all.contains("Authentication failed"), "{all}");
    }
    let url = http.url_with("team.git", PASSWORD);
    let out = env.mas(a, &["sync", &url, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", shown(&out));
    assert!(!shown(&out).contains(PASSWORD), "{}", shown(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["remote"], format!("http://{USER}:<redacted>@127.0.0.1:{}/git/team.git", http.port));
    assert_eq!(sorted_ns(&env, a, "refs/mas/journal/alice"), [1], "the record went through");
}

#[test]
fn a_server_refusing_custom_refs_is_named_at_once_and_nothing_is_lost() {
    let env = TestEnv::new();
    let http = HttpRemote::start(&env);
    let (remote, clones) = served_team(&env, &http, &["alice", "bob"]);
    let (a, b) = (&clones[0], &clones[1]);
    // The server takes branches and tags only, as some hosting rules do.
    let hook = remote.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\nwhile read old new ref; do\n  case \"$ref\" in refs/heads/*|refs/tags/*) ;;\n  \
         *) echo \"refusing $ref: this server takes branches and tags only\" >&2; exit 1 ;;\n  esac\ndone\n",
    )
    .unwrap();
    set_executable(&hook);
    append(&env, a, "alice", None, 1);
    append(&env, a, "alice", Some("refs/mas/shared/x"), 2);

    let out = env.mas(a, &["sync", "--json"]);
    assert_eq!(out.status.code(), Some(5), "{}", shown(&out));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["rounds"], 1, "a refusal is not retried: {report:#}");
    let unresolved = report["unresolved"].as_array().unwrap();
    assert_eq!(unresolved.len(), 2, "{report:#}");
    for u in unresolved {
        assert_eq!(u["reason"], "refused", "{u}");
        assert_eq!(u["summary"], "[remote rejected] (pre-receive hook declined)", "{u}");
        let said = u["remote_said"].as_array().unwrap();
        assert!(said.iter().any(|l| l.as_str().unwrap().contains("takes branches and tags only")), "{u}");
    }
    let out = env.mas(a, &["sync"]);
    assert_eq!(out.status.code(), Some(5));
    let err = stderr(&out);
    assert!(err.contains("not synced: refs/mas/journal/alice: the remote refuses the ref"), "{err}");
    assert!(err.contains("Hint: origin does not accept refs under refs/mas/"), "{err}");
    assert!(stdout(&out).contains("push refused by the remote"), "{}", stdout(&out));
    assert_eq!(mas_refs(&env, &remote), "", "the server holds no custom ref");

    // The server is fixed: the next sync carries everything, to the other clone too.
    std::fs::remove_file(&hook).unwrap();
    env.mas_quiet_ok(a, &["sync"]);
    env.mas_quiet_ok(b, &["sync"]);
    assert_eq!(sorted_ns(&env, b, "refs/mas/journal/alice"), [1]);
    assert_eq!(sorted_ns(&env, b, "refs/mas/shared/x"), [2]);
    assert_eq!(mas_refs(&env, b), mas_refs(&env, &remote));
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
