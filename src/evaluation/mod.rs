//! Evaluation harnesses for the attention protocol: the card-alignment analog and the two-coder
//! workspace simulation (seed 003, "Evaluation harnesses").
//!
//! Both harnesses drive the production attention code — [`crate::attention::snapshot::compute`]
//! and the frame hash, [`crate::attention::rule::derive_focus`], [`crate::attention::rule::align`],
//! [`crate::attention::rule::decide`] and [`crate::attention::gate::gate`] — and simulate only the
//! agents and the workspace. Every random draw comes from a seeded PCG stream derived from
//! (seed, run, episode), so one seed gives one table on every machine, and conditions compare on
//! the same deals.

pub mod card;
pub mod rng;
pub mod stats;
pub mod workspace;
