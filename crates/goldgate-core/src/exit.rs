//! The exit status: the same three codes for every command, documented once here.

/// How a command ended. goldgate promises these three codes and no others.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// 0: everything passed (warnings allowed) and no regression tripped.
    Success = 0,
    /// 1: a test failed, a lint error was found, or a regression threshold tripped.
    Failure = 1,
    /// 2: the run could not be judged: bad arguments, a file that does not parse, no agent
    /// reachable, an internal error.
    Error = 2,
}

impl Exit {
    pub fn code(self) -> u8 {
        self as u8
    }
}
