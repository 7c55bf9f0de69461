//! Joint attention: a deterministic saliency snapshot of the repository whose SHA-256 is the team's
//! frame. Computing the snapshot is pure ([`snapshot::compute`]); gathering its inputs from the
//! repository and storing frames are in [`frame`].

pub mod ancestry;
pub mod beneath;
pub mod board;
pub mod board_cache;
pub mod caller;
pub mod claims;
pub mod damage;
pub mod denials;
pub mod edit_gate;
pub mod focus_store;
pub mod frame;
pub mod gate;
pub mod gate_io;
pub mod git_hooks;
pub mod held_guard;
pub mod inputs;
pub mod lanes;
pub mod lost;
pub mod own_ground;
pub mod replay;
pub mod rule;
pub mod run_end;
pub mod saliency;
pub mod select;
pub mod shared_identity;
pub mod shell_git;
pub mod shell_guard;
pub mod snapshot;
pub mod staged;
pub mod team;
pub mod team_gate;
pub mod touched;
pub mod trailers;
pub mod watch;
pub mod weights;
