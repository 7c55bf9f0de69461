//! Who an agent is: a ref-safe name, an ed25519 key, its `did:key`, and the roster that binds them.
//!
//! Identity is DID-only: the roster maps a name to a `did:key`, and a record counts only when its
//! signature verifies under the key the roster gives for the name it claims.

pub mod key;
pub mod name;
pub mod roster;
pub mod session;
pub mod trail;

pub use key::{AgentKey, KeyError};
pub use name::{NameError, name_from, validate_name};
pub use roster::{
    EntrySource, ROSTER_HEADER, ROSTER_PATH, Roster, RosterEntry, RosterError, append_to_roster, parse_roster,
    with_entry,
};
pub use session::{principal_of, session_agent};
