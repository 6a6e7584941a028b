//! One bound on what the goldens as a whole expand to in memory, counted as each file is
//! parsed. Each file has its limits ([`crate::yaml::MAX_FILE_BYTES`] and the YAML limits
//! beside it), but every case stays in memory for the whole run, so the limits of one file
//! bound nothing of a suite: ten files within them took `list` to 3.2 GB. The bound counts
//! the parsed tree ([`crate::yaml::Node::footprint`]), not the files' bytes, since a small
//! file whose aliases replay a large scalar holds a copy per replay.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::yaml::{self, Node};

/// The most the goldens may expand to, in all: 512 MiB. A CI runner has 7 GB (GitHub's
/// standard Linux runner), shared with the agent under test, which often runs on it, and with
/// the replies and reports of the run. Peak memory was at most 3.6 times this count (`list`
/// of a golden of two million one-letter tags, 57 bytes each here; the worst shape measured),
/// so goldens at the bound keep goldgate under 2 GB, under a third of the runner. A suite of
/// 10,000 cases of ten plain turns of 50 characters a side counts about 40 MiB.
pub const MAX_GOLDENS_BYTES: usize = 512 * 1024 * 1024;

/// What a parsed CSV field costs beyond its text: the string that holds it, and an allocation.
const CSV_FIELD_BYTES: usize = std::mem::size_of::<String>() + yaml::ALLOCATION_BYTES;

/// What the goldens loaded so far expand to, against [`MAX_GOLDENS_BYTES`].
#[derive(Debug)]
pub struct Tally {
    held: usize,
    max: usize,
    /// The golden sets counted, by [`super::regtrace::set_identity`].
    sets: HashSet<PathBuf>,
}

impl Default for Tally {
    fn default() -> Self {
        Self::within(MAX_GOLDENS_BYTES)
    }
}

impl Tally {
    /// A tally against `max` bytes instead of [`MAX_GOLDENS_BYTES`] (for tests).
    fn within(max: usize) -> Self {
        Self {
            held: 0,
            max,
            sets: HashSet::new(),
        }
    }

    /// Counts the parsed tree of `file`; past the bound, the error names `file`, and nothing
    /// more should be loaded (its cases included).
    pub fn add_tree(&mut self, file: &Path, root: &Node) -> Result<(), TooLarge> {
        self.add(file, root.footprint())
    }

    /// Counts a Regtrace golden set's tree once however often it is reached: a set named
    /// directly and listed by its config is read twice, but the suite keeps one of them.
    /// `identity` is the set's [`super::regtrace::set_identity`].
    pub fn add_set(&mut self, identity: PathBuf, file: &Path, root: &Node) -> Result<(), TooLarge> {
        if !self.sets.insert(identity) {
            return Ok(());
        }
        self.add_tree(file, root)
    }

    /// Counts a CSV file's text: it has no aliases, so what it holds is its text and its fields.
    pub fn add_csv(&mut self, file: &Path, text: &str) -> Result<(), TooLarge> {
        let fields = text.bytes().filter(|b| matches!(b, b',' | b'\n')).count() + 1;
        self.add(file, text.len() + fields * CSV_FIELD_BYTES)
    }

    fn add(&mut self, file: &Path, bytes: usize) -> Result<(), TooLarge> {
        self.held = self.held.saturating_add(bytes);
        if self.held > self.max {
            return Err(TooLarge {
                file: file.to_path_buf(),
                held: self.held,
                max: self.max,
            });
        }
        Ok(())
    }
}

/// The goldens expand past [`MAX_GOLDENS_BYTES`]: loading stopped at `file`.
#[derive(Debug, thiserror::Error)]
#[error(
    "the goldens expand to {} MiB in memory up to {}, past the {} MiB goldgate loads in all: \
     it stopped there, before playing or checking any golden\nhint: run the suite in parts, \
     a job per folder of goldens, each under the bound (see the limits in docs/reliability.md)",
    mib(*.held),
    .file.display(),
    mib(*.max)
)]
pub struct TooLarge {
    /// The file that took the total past the bound.
    pub file: PathBuf,
    /// What the goldens up to and including `file` expand to, in bytes.
    pub held: usize,
    /// The bound, in bytes.
    pub max: usize,
}

/// Bytes as whole MiB, rounded up: a total just past the bound never reads as equal to it.
fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1024 * 1024)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::Tally;
    use crate::yaml;

    #[test]
    fn a_tally_stops_at_the_file_that_takes_it_past_the_bound() {
        let root = yaml::parse("tags: [a, b, c]\n").unwrap();
        let per_file = root.footprint();
        let mut tally = Tally::within(2 * per_file);
        assert!(tally.add_tree(Path::new("one.yaml"), &root).is_ok());
        assert!(tally.add_tree(Path::new("two.yaml"), &root).is_ok());
        let over = tally.add_tree(Path::new("three.yaml"), &root).unwrap_err();
        assert_eq!(over.file, Path::new("three.yaml"));
        assert_eq!((over.held, over.max), (3 * per_file, 2 * per_file));
    }

    #[test]
    fn a_set_reached_twice_is_counted_once() {
        let root = yaml::parse("tags: [a, b, c]\n").unwrap();
        let mut tally = Tally::within(root.footprint());
        let set = Path::new("sets/s.yaml");
        assert!(tally.add_set(set.to_path_buf(), set, &root).is_ok());
        let again = Path::new("./sets/s.yaml");
        assert!(tally.add_set(set.to_path_buf(), again, &root).is_ok());
        let other = Path::new("sets/t.yaml");
        assert!(tally.add_set(other.to_path_buf(), other, &root).is_err());
    }

    #[test]
    fn an_alias_counts_as_often_as_it_is_replayed() {
        let text = "x".repeat(1000);
        let once = yaml::parse(&format!("a: [{text}]\n")).unwrap();
        let thrice = yaml::parse(&format!("a: [&t {text}, *t, *t]\n")).unwrap();
        assert!(thrice.footprint() > once.footprint() + 2 * text.len());
    }
}
