//! The JSON form of a report: the [`results`](crate::results) model written as it is, and
//! read back (a baseline, a shard, a saved run), refusing another schema version before it
//! could be misread.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Report, SCHEMA_VERSION};
use crate::stats::MAX_HISTOGRAM_COUNT;

/// Why a saved report (a baseline, a report given to `compare`) cannot be used. Each names
/// the file.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{}: cannot read the report: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: not a regular file ({kind}): a report is read from a file", path.display())]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error(
        "{}: {} MiB, over the {} MiB a report may hold: not read (is it a report?)",
        path.display(), size / (1024 * 1024), MAX_REPORT_BYTES / (1024 * 1024)
    )]
    TooBig { path: PathBuf, size: u64 },
    #[error("{}: not a goldgate JSON report: {error}{}", path.display(), truncated_hint(error))]
    Parse {
        path: PathBuf,
        error: serde_json::Error,
    },
    #[error(
        "{}: a report of schema version {found}; this goldgate reads version {SCHEMA_VERSION} (write it again with this version)",
        path.display()
    )]
    Version { path: PathBuf, found: u64 },
    #[error(
        "{}: {field}: {count} latencies, over the {limit} allowed: not read (edited by hand? \
         a baseline is rewritten by `goldgate run --update-baseline`)",
        path.display()
    )]
    TooManyLatencies {
        path: PathBuf,
        field: String,
        count: u64,
        limit: u64,
    },
}

/// Says so when the text stops in the middle of the JSON: a file cut short, often by a full disk
/// or an interrupted copy.
fn truncated_hint(error: &serde_json::Error) -> &'static str {
    if error.is_eof() {
        " (the file ends in the middle of the JSON: truncated?)"
    } else {
        ""
    }
}

/// The largest report read back (256 MiB): a report of 100,000 cases with their replies is
/// far smaller, and reading one takes up to about three times its size in memory (parsed as it
/// is read; `figures_memory_of_a_report_read_back` in `tests/it/faults_found_3.rs` measures
/// it), so a bigger file (or a device that never ends) is refused rather than read.
pub(crate) const MAX_REPORT_BYTES: u64 = 256 * 1024 * 1024;

/// Reads a report written by [`write`], refusing another schema version before it could be
/// misread, and anything but a regular file of at most [`MAX_REPORT_BYTES`]: `/dev/zero`
/// would be read without end and a FIFO would block.
pub fn read_file(path: &Path) -> Result<Report, ReadError> {
    let version_error = |found| ReadError::Version {
        path: path.to_path_buf(),
        found,
    };
    // Parsed as it is read, straight into the typed report: the whole text, as large again as
    // the file, is never held beside it.
    let report = match serde_json::from_reader::<_, Report>(open_capped(path)?) {
        Ok(report) if report.schema_version == SCHEMA_VERSION => report,
        Ok(report) => return Err(version_error(report.schema_version.into())),
        // A report of another version may not parse as one of this version: say which.
        Err(error) => {
            return Err(match version_of(path) {
                Some(found) if found != u64::from(SCHEMA_VERSION) => version_error(found),
                _ => ReadError::Parse {
                    path: path.to_path_buf(),
                    error,
                },
            });
        }
    };
    check_latency_counts(&report).map_err(|(field, count, limit)| ReadError::TooManyLatencies {
        path: path.to_path_buf(),
        field,
        count,
        limit,
    })?;
    Ok(report)
}

/// The `schema_version` of the report at `path`, when it has one.
fn version_of(path: &Path) -> Option<u64> {
    #[derive(Deserialize)]
    struct Versioned {
        schema_version: u64,
    }
    let versioned: Versioned = serde_json::from_reader(open_capped(path).ok()?).ok()?;
    Some(versioned.schema_version)
}

/// The most latencies all of a report's histograms may hold together: the gate expands them
/// into one number each (256 MB at most), and a baseline of 8,000 cases, each with the
/// window of times a baseline keeps, stays under it.
pub(crate) const MAX_REPORT_LATENCIES: u64 = 32 * MAX_HISTOGRAM_COUNT;

/// Refuses a histogram counting more than [`MAX_HISTOGRAM_COUNT`] latencies, or all of them
/// more than [`MAX_REPORT_LATENCIES`]: the field, its count and the
/// limit. The counts are a few bytes of text each, so the size cap does not bound them.
fn check_latency_counts(report: &Report) -> Result<(), (String, u64, u64)> {
    let suite = [
        ("samples.latency".to_owned(), &report.samples.latency),
        ("samples.ttft".to_owned(), &report.samples.ttft),
    ];
    let cases = report.cases.iter().enumerate().flat_map(|(i, case)| {
        let times = &case.turn_times;
        let field = |name| format!("cases[{i}].turn_times.{name} (case {})", case.key());
        [
            (field("latency"), &times.latency),
            (field("ttft"), &times.ttft),
        ]
    });
    let mut total = 0_u64;
    for (field, histogram) in suite.into_iter().chain(cases) {
        let count = histogram.count();
        if count > MAX_HISTOGRAM_COUNT {
            return Err((field, count, MAX_HISTOGRAM_COUNT));
        }
        total = total.saturating_add(count);
    }
    if total > MAX_REPORT_LATENCIES {
        let whole = "all latency histograms together".to_owned();
        return Err((whole, total, MAX_REPORT_LATENCIES));
    }
    Ok(())
}

/// `path` opened for reading, buffered: a regular file (links followed) of at most
/// [`MAX_REPORT_BYTES`], and no more read from it should it grow.
fn open_capped(path: &Path) -> Result<impl io::Read, ReadError> {
    let io_error = |error| ReadError::Io {
        path: path.to_path_buf(),
        error,
    };
    // Looked at before opening: opening a FIFO for reading blocks until a writer comes.
    let kind = fs::metadata(path).map_err(io_error)?.file_type();
    if !kind.is_file() {
        return Err(ReadError::NotAFile {
            path: path.to_path_buf(),
            kind: crate::atomic::file_kind(kind),
        });
    }
    let file = fs::File::open(path).map_err(io_error)?;
    let size = file.metadata().map_err(io_error)?.len();
    if size > MAX_REPORT_BYTES {
        return Err(ReadError::TooBig {
            path: path.to_path_buf(),
            size,
        });
    }
    Ok(io::BufReader::with_capacity(
        1 << 16,
        io::Read::take(file, MAX_REPORT_BYTES),
    ))
}

/// The report as written: its fields, then the verdict and the exit code it stands for, so
/// that a script reading the file agrees with the run's exit status. Reading a report back
/// ignores both and derives them again ([`Report::verdict`]).
#[derive(Serialize)]
struct Written<'a> {
    #[serde(flatten)]
    report: &'a Report,
    verdict: &'static str,
    exit: u8,
}

impl<'a> Written<'a> {
    fn of(report: &'a Report) -> Self {
        Self {
            report,
            verdict: report.verdict().name(),
            exit: report.exit().code(),
        }
    }
}

/// Pretty JSON with a trailing newline.
pub fn write(report: &Report, out: &mut (impl Write + ?Sized)) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &Written::of(report))?;
    out.write_all(b"\n")
}

/// The same document on one line (the HTML page embeds it).
pub fn to_string(report: &Report) -> serde_json::Result<String> {
    serde_json::to_string(&Written::of(report))
}

/// Writes the report to `path` atomically: a reader never sees half of it, and on failure the
/// old file is left as it was. A report past [`MAX_REPORT_BYTES`] is not written, since
/// [`read_file`] would refuse it: a baseline or shard goldgate writes can always be read back.
pub fn write_file_atomically(path: &Path, report: &Report) -> io::Result<()> {
    crate::atomic::write(path, |out| write(report, &mut Capped { out, written: 0 }))
}

/// A writer failing once more than [`MAX_REPORT_BYTES`] went through it.
struct Capped<'a> {
    out: &'a mut dyn Write,
    written: u64,
}

impl Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written.saturating_add(buf.len() as u64) > MAX_REPORT_BYTES {
            return Err(io::Error::other(format!(
                "the report is over the {} MiB a report may hold to be read back (by \
                 --baseline, --rerun, compare, merge): not written",
                MAX_REPORT_BYTES / (1024 * 1024)
            )));
        }
        let written = self.out.write(buf)?;
        self.written += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
