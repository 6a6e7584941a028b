//! GitHub: where goldgate's users meet it, on a pull request.
//!
//! Each output is one module fed the JSON report (so that `goldgate report` can publish a run
//! that happened elsewhere, as the trusted half of a fork's workflow):
//! - [`context`]: what Actions tells a step through its environment.
//! - [`comment`]: the one sticky PR comment per suite, through octocrab.
//! - [`outputs`]: the step's outputs and its step summary.
//! - [`annotate`]: an `::error` annotation on the line of each failing turn.
//!
//! The Markdown of the comment and the summary is [`crate::report::markdown`]'s. Nothing here
//! prints: the binary decides what goes to the log.

pub mod annotate;
pub mod comment;
pub mod context;
pub mod outputs;

// Every sink over one summary: the report's and this layer's.
#[cfg(test)]
mod sinks_tests;
