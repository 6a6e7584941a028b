//! Files written so that a reader never sees half of one: into a new file in the same
//! directory (a rename cannot cross file systems), flushed to disk, then renamed over the
//! target. On failure the old file is left as it was and the temporary one removed. Every
//! file goldgate writes (the JSON report, the baseline, JUnit, HTML, Markdown, `--record`
//! transcripts, the judge cache) is written this way.
//!
//! What is not a regular file is never replaced: a symbolic link is followed (the link stays,
//! the file it points to is written atomically), and a device or a pipe (`/dev/stdout`,
//! `/dev/full`, a FIFO) is written through, so that its errors reach the caller.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many symbolic links in a row are followed before giving up (a loop).
const MAX_LINKS: u32 = 40;

/// Writes `path` with what `fill` writes, atomically (see the module doc).
pub fn write(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => path = link_target(&path)?,
            Ok(meta) if !meta.is_file() && !meta.is_dir() => return write_through(&path, fill),
            _ => return replace(&path, fill),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Where the link at `path` points, relative to the link's own directory.
fn link_target(path: &Path) -> io::Result<PathBuf> {
    let target = fs::read_link(path)?;
    Ok(match path.parent() {
        Some(parent) if target.is_relative() => parent.join(target),
        _ => target,
    })
}

/// A device or a pipe: opened and written as it is.
fn write_through(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut out = BufWriter::new(OpenOptions::new().write(true).open(path)?);
    fill(&mut out)?;
    out.flush()
}

/// A regular file, or none yet: a temporary file renamed over it.
fn replace(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
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
    if path.is_dir() {
        return Err(io::Error::other("is a directory: name a file in it"));
    }
    if fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        // A device or a pipe is written through: it must open for writing.
        return OpenOptions::new().write(true).open(path).map(drop);
    }
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

    #[cfg(unix)]
    #[test]
    fn a_link_is_followed_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir(dir.path().join("real")).unwrap();
        let link = dir.path().join("report.json");
        std::os::unix::fs::symlink("real/report.json", &link).unwrap();
        super::write(&link, |out| out.write_all(b"new")).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read(dir.path().join("real/report.json")).unwrap(),
            b"new"
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_device_is_written_through_and_its_errors_reach_the_caller() {
        use std::path::Path;
        super::write(Path::new("/dev/null"), |out| out.write_all(b"gone")).unwrap();
        assert!(!fs::metadata("/dev/null").unwrap().is_file());
        let full = super::write(Path::new("/dev/full"), |out| out.write_all(&[0; 1 << 16]));
        assert!(full.is_err(), "a full device must fail the write");
        assert!(!fs::metadata("/dev/full").unwrap().is_file());
    }
}
