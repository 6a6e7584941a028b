//! Sinks: each output is a small renderer over typed results, writing to any `io::Write`.

pub mod annotations;
pub mod console;
pub mod gate;
pub mod json;
pub mod junit;
pub mod lint;
pub mod markdown;
