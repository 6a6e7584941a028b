//! goldgate: gate pull requests on conversation tests for AI agents.
//!
//! The library owns all behaviour; `main.rs` only parses arguments and maps outcomes to exit
//! codes. Library code never prints: it returns typed results that the sinks in `report`
//! render.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod app;
pub mod config;
pub mod discover;
pub mod formats;
pub mod gate;
pub mod github;
pub mod limit;
pub mod llm;
pub mod load;
pub mod merge;
pub mod net;
pub mod project;
pub mod report;
pub mod run;
pub mod schema;
pub mod score;
pub mod simulate;

// The layers with no import upward live in their own crate (crates/goldgate-core), re-exported
// here at the paths the rest of goldgate and its users know.
pub use goldgate_core::{
    atomic, diagnostic, exit, metrics, model, results, secrets, shard, stats, transcript, yaml,
};
