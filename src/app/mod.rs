//! What the commands share, so that no command reaches into another: loading the config and
//! the goldens, setting up the gate, writing a baseline, publishing to GitHub. Like the rest
//! of the library it never prints: it returns values, and errors whose messages the binary
//! prints as they are.

pub mod baseline;
pub mod calibrate;
pub mod changes;
pub mod convert;
pub mod dry_run;
pub mod grading;
pub mod init;
pub mod list;
pub mod plan;
pub mod publish;
pub mod regate;
pub mod request;
pub mod secrets;
pub mod select;
pub mod session;
pub mod setup;
pub mod subset;
pub mod tags;
