//! Files written so that a reader never sees half of one: into a new file in the same
//! directory (a rename cannot cross file systems), flushed to disk, then renamed over the
//! target. On failure the old file is left as it was and the temporary one removed. The JSON
//! report, the baseline, `--record` transcripts and the judge cache all write this way.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `path` with what `fill` writes, atomically (see the module doc).
pub fn write(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a file path: {}", path.display()),
        )
    })?;
    let (temporary, file) = create_temporary(dir, &name.to_string_lossy())?;
    let written = fill_and_sync(file, fill).and_then(|()| fs::rename(&temporary, path));
    if written.is_err() {
        // Best effort: the error that matters is the one returned.
        let _ = fs::remove_file(&temporary);
    }
    written
}

/// Whether `path` could be written by [`write`]: a temporary file is created next to it and
/// removed. Checked before a run, so that an output that cannot be written is an error before
/// any agent is called rather than after the whole run. Names the directory on failure.
pub fn check_writable(path: &Path) -> io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let (temporary, file) = create_temporary(dir, name.as_deref().unwrap_or("output"))
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write in {}: {e}", dir.display())))?;
    drop(file);
    fs::remove_file(&temporary)
}

/// A new file next to the target, with a name no other writer (process or task) picks. The
/// name does not end like the target's, so a leftover is never read as one.
fn create_temporary(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut attempts = 0;
    loop {
        let candidate = dir.join(format!(
            ".{name}.{}-{}-{:08x}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed),
            fastrand::u32(..)
        ));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempts < 16 => attempts += 1,
            Err(e) => return Err(e),
        }
    }
}

fn fill_and_sync(
    file: File,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = BufWriter::new(file);
    fill(&mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::io;

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.json");
        super::write(&path, |out| out.write_all(b"old")).unwrap();
        let failed = super::write(&path, |out| {
            out.write_all(b"half")?;
            Err(io::Error::other("disk full"))
        });
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
