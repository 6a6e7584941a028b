//! Scoring through the library: turns and cases built from the model types, exchanges built by
//! hand, every check's status and method asserted.

mod agent_text;
mod metrics;
mod scorers;
mod similarity;
mod support;
mod tool_calls;
