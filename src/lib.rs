//! goldgate: gate pull requests on conversation tests for AI agents.
//!
//! The library owns all behaviour; `main.rs` only parses arguments and maps outcomes to exit
//! codes. Library code never prints: it returns typed results that the sinks in `report`
//! render.
#![warn(clippy::print_stdout, clippy::print_stderr)]

pub mod agent;
pub mod app;
pub mod atomic;
pub mod config;
pub mod diagnostic;
pub mod discover;
pub mod exit;
pub mod formats;
pub mod gate;
pub mod github;
pub mod limit;
pub mod llm;
pub mod load;
pub mod merge;
pub mod metrics;
pub mod model;
pub mod net;
pub mod project;
pub mod report;
pub mod results;
pub mod run;
pub mod schema;
pub mod score;
pub mod secrets;
pub mod shard;
pub mod simulate;
pub mod stats;
pub mod transcript;
pub mod yaml;
