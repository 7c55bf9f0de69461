//! Ed25519 keys and their `did:key` identities.
//!
//! A private key is a 32-byte seed written as 64 hex digits on one line, in a file of mode 0600
//! outside any tracked tree: `$GIT_MAS_KEY_DIR/<name>.key` when that variable is set, else
//! `$XDG_CONFIG_HOME/git-mas/keys/<name>.key`, else `$HOME/.config/git-mas/keys/<name>.key`.
//! A key readable by group or others is refused, as ssh refuses one.
//!
//! The public identity is the W3C `did:key` form: `did:key:z` + base58btc(0xed 0x01 ‖ public key).

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Errors reading, writing or decoding keys.
#[derive(Debug, Error)]
pub enum KeyError {
    /// No key file for this agent on this machine.
    #[error("no private key for agent '{name}' at {}", path.display())]
    Missing { name: String, path: PathBuf },
    /// The key file's mode lets others read it.
    #[error("private key {} is readable by others (mode {mode:o}); run `chmod 600 {}`", path.display(), path.display())]
    TooOpen { path: PathBuf, mode: u32 },
    /// The key file is not 64 hex digits.
    #[error("private key {} is not 64 hex digits", path.display())]
    Malformed { path: PathBuf },
    /// A key already exists where a new one would be written.
    #[error("a private key for '{name}' already exists at {}", path.display())]
    Exists { name: String, path: PathBuf },
    /// Neither `GIT_MAS_KEY_DIR`, `XDG_CONFIG_HOME` nor `HOME` is set.
    #[error("cannot find a key directory: set GIT_MAS_KEY_DIR, XDG_CONFIG_HOME or HOME")]
    NoKeyDir,
    /// The operating system's random source failed.
    #[error("the system random source failed: {0}")]
    Random(String),
    /// Reading or writing the key file failed.
    #[error("cannot access key file {}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A string that should be a `did:key` for an ed25519 key is not.
    #[error("{did:?} is not an ed25519 did:key")]
    BadDid { did: String },
}

impl KeyError {
    /// What the user can do about it, when there is something specific to say.
    pub fn remedy(&self) -> Option<String> {
        match self {
            KeyError::Missing { name, .. } => Some(format!(
                "this machine has no key for '{name}'; set GIT_MAS_KEY_DIR to where it is, or create a new agent with `git mas agent new`"
            )),
            KeyError::TooOpen { path, .. } => Some(format!("chmod 600 {}", path.display())),
            KeyError::Exists { name, .. } => {
                Some(format!("pass --reuse-key to put the existing key for '{name}' on this roster"))
            }
            _ => None,
        }
    }
}

/// The directory private keys live in.
pub fn key_dir() -> Result<PathBuf, KeyError> {
    if let Some(dir) = std::env::var_os("GIT_MAS_KEY_DIR").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(dir).join("git-mas").join("keys"));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return Ok(PathBuf::from(home).join(".config").join("git-mas").join("keys"));
    }
    Err(KeyError::NoKeyDir)
}

/// The path of `name`'s private key.
pub fn key_path(name: &str) -> Result<PathBuf, KeyError> {
    Ok(key_dir()?.join(format!("{name}.key")))
}

/// A loaded private key.
pub struct AgentKey {
    signing: SigningKey,
}

impl AgentKey {
    /// A fresh key from the operating system's random source.
    pub fn generate() -> Result<Self, KeyError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed).map_err(|e| KeyError::Random(e.to_string()))?;
        Ok(Self::from_seed(seed))
    }

    /// The key with this 32-byte seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        AgentKey { signing: SigningKey::from_bytes(&seed) }
    }

    /// Loads `name`'s key, refusing a missing, malformed or group/world-readable file.
    pub fn load(name: &str) -> Result<Self, KeyError> {
        Self::load_from(name, &key_path(name)?)
    }

    /// Loads a key from an explicit path.
    pub fn load_from(name: &str, path: &Path) -> Result<Self, KeyError> {
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(KeyError::Missing { name: name.into(), path: path.into() });
            }
            Err(source) => return Err(KeyError::Io { path: path.into(), source }),
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(KeyError::TooOpen { path: path.into(), mode });
            }
        }
        #[cfg(not(unix))]
        let _ = meta;
        let text = std::fs::read_to_string(path).map_err(|source| KeyError::Io { path: path.into(), source })?;
        let seed = decode_hex32(text.trim()).ok_or_else(|| KeyError::Malformed { path: path.into() })?;
        Ok(Self::from_seed(seed))
    }

    /// Writes this key for `name`, creating the directory (mode 0700) and the file (mode 0600);
    /// refuses to overwrite an existing key. The key is written whole to a temporary file
    /// (`.<name>.key.<pid>.tmp`, flushed to disk) and then linked to its name, which fails when
    /// the name exists: a process killed at any instant leaves no key or a whole one (and at most
    /// that temporary file, which the next save of the name removes).
    pub fn save(&self, name: &str) -> Result<PathBuf, KeyError> {
        let path = key_path(name)?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        std::fs::create_dir_all(&dir).map_err(|source| KeyError::Io { path: dir.clone(), source })?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700));
        }
        remove_temporaries(&dir, name);
        let tmp = dir.join(format!(".{name}.key.{}.tmp", std::process::id()));
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let written = (|| {
            use std::io::Write;
            let mut file = opts.open(&tmp)?;
            file.write_all(format!("{}\n", hex(&self.signing.to_bytes())).as_bytes())?;
            file.sync_all()
        })();
        if let Err(source) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(KeyError::Io { path, source });
        }
        let linked = std::fs::hard_link(&tmp, &path);
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(path),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                Err(KeyError::Exists { name: name.into(), path })
            }
            Err(source) => Err(KeyError::Io { path, source }),
        }
    }

    /// The public key.
    pub fn public(&self) -> VerifyingKey {
        self.signing.verifying_key()
    }

    /// This key's `did:key`.
    pub fn did(&self) -> String {
        did_from_public(&self.public())
    }

    /// Signs `message`; the signature is 64 bytes.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.signing.sign(message).to_bytes()
    }
}

/// Removes the temporary files a killed [`AgentKey::save`] of `name` left in `dir` (those of
/// processes that are gone).
fn remove_temporaries(dir: &Path, name: &str) {
    let prefix = format!(".{name}.key.");
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = file.strip_prefix(&prefix).and_then(|r| r.strip_suffix(".tmp")) else { continue };
        let gone = pid
            .parse::<i32>()
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .is_some_and(|pid| rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH));
        if gone {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

const ED25519_MULTICODEC: [u8; 2] = [0xed, 0x01];

/// The `did:key` of an ed25519 public key.
pub fn did_from_public(key: &VerifyingKey) -> String {
    let mut bytes = Vec::with_capacity(34);
    bytes.extend_from_slice(&ED25519_MULTICODEC);
    bytes.extend_from_slice(key.as_bytes());
    format!("did:key:z{}", bs58::encode(bytes).into_string())
}

/// The ed25519 public key inside a `did:key`.
pub fn public_from_did(did: &str) -> Result<VerifyingKey, KeyError> {
    let bad = || KeyError::BadDid { did: did.into() };
    let encoded = did.strip_prefix("did:key:z").ok_or_else(bad)?;
    let bytes = bs58::decode(encoded).into_vec().map_err(|_| bad())?;
    if bytes.len() != 34 || bytes[..2] != ED25519_MULTICODEC {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&bytes[2..]);
    VerifyingKey::from_bytes(&key).map_err(|_| bad())
}

/// Verifies a 64-byte signature strictly (no malleable encodings).
pub fn verify(key: &VerifyingKey, message: &[u8], signature: &[u8]) -> bool {
    let Ok(sig) = Signature::from_slice(signature) else {
        return false;
    };
    key.verify_strict(message, &sig).is_ok()
}

/// Lower-case hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Decodes hex of any even length; `None` on any other character.
pub fn decode_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    let nib = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    };
    s.as_bytes().chunks(2).map(|p| Some(nib(p[0])? << 4 | nib(p[1])?)).collect()
}

fn decode_hex32(s: &str) -> Option<[u8; 32]> {
    decode_hex(s)?.try_into().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_round_trips_and_has_the_ed25519_prefix() {
        let key = AgentKey::from_seed([7u8; 32]);
        let did = key.did();
        assert!(did.starts_with("did:key:z6Mk"), "{did}");
        assert_eq!(public_from_did(&did).unwrap(), key.public());
        assert!(public_from_did("did:key:zabc").is_err());
        assert!(public_from_did("did:web:example.com").is_err());
    }

    #[test]
    fn signatures_verify_only_with_the_right_key_and_message() {
        let a = AgentKey::from_seed([1u8; 32]);
        let b = AgentKey::from_seed([2u8; 32]);
        let sig = a.sign(b"hello");
        assert!(verify(&a.public(), b"hello", &sig));
        assert!(!verify(&b.public(), b"hello", &sig));
        assert!(!verify(&a.public(), b"hellp", &sig));
        assert!(!verify(&a.public(), b"hello", &sig[..63]));
    }

    #[test]
    fn hex_round_trips() {
        assert_eq!(decode_hex(&hex(&[0, 15, 255, 16])).unwrap(), vec![0, 15, 255, 16]);
        assert!(decode_hex("0g").is_none());
        assert!(decode_hex("abc").is_none());
    }
}
