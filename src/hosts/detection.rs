//! Whether a host is used in a project, for `git mas init --team`: its program on `PATH`, or a
//! file or folder at the top of the project that only it reads (the table's [`super::DetectFacts`]).

use super::{Env, Host};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// Why a host counts as used in a project ([`detect`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Detection {
    /// Its program is on `PATH`.
    Program {
        /// The program's name.
        program: String,
        /// Where it was found.
        path: PathBuf,
    },
    /// One of its markers exists at the top of the project.
    Marker {
        /// The marker, relative to the top.
        marker: String,
    },
}

impl fmt::Display for Detection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Detection::Program { program, path } => write!(f, "`{program}` on PATH ({})", path.display()),
            Detection::Marker { marker } => write!(f, "{marker} exists"),
        }
    }
}

/// Why `host` counts as used in the project at `top`: its program on `env`'s `PATH` (an
/// executable file of that name), each of its markers that exists ([`super::DetectFacts`]). Empty when
/// neither.
pub fn detect(host: Host, top: &Path, env: &dyn Env) -> Vec<Detection> {
    let facts = host.facts().detect;
    let mut found = Vec::new();
    if let Some(path) = on_path(facts.program, env) {
        found.push(Detection::Program { program: facts.program.to_string(), path });
    }
    for marker in facts.markers {
        if top.join(marker).symlink_metadata().is_ok() {
            found.push(Detection::Marker { marker: marker.to_string() });
        }
    }
    found
}

/// The first executable file named `program` in a folder of `env`'s `PATH`: the one a shell
/// would start.
pub(crate) fn on_path(program: &str, env: &dyn Env) -> Option<PathBuf> {
    let path = env.var("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join(program)).find(|p| executable(p))
}

fn executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else { return false };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    meta.is_file()
}
