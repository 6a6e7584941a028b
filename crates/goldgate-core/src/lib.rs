//! goldgate's core: the layers that import nothing above them (ARCHITECTURE.md, "Layers").
//! The golden model and what a turn produced, the results of a run and their JSON form (the
//! report's contract), the aggregates and the statistics the gate decides with, case keys,
//! diagnostics, the spanned YAML tree, secrets, exit codes and atomic writes.
//!
//! This crate does not depend on `goldgate`, so an import from here into the layers above does
//! not compile. Its `pub` items are its API (`unreachable_pub` is denied); goldgate re-exports
//! each module at the same path (`goldgate::model`, `goldgate::results`, ...).
#![deny(unreachable_pub)]
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod atomic;
pub mod diagnostic;
pub mod exit;
pub mod metrics;
pub mod model;
pub mod results;
pub mod secrets;
pub mod shard;
pub mod stats;
pub mod transcript;
pub mod yaml;
