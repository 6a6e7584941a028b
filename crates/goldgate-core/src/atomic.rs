//! Files written so that a reader never sees half of one: into a new file in the same
//! directory (a rename cannot cross file systems), flushed to disk, then renamed over the
//! target. On failure the old file is left as it was and the temporary one removed. Every
//! file goldgate writes (the JSON report, the baseline, JUnit, HTML, Markdown, `--record`
//! transcripts, the judge cache) is written this way.
//!
//! Only regular files are written. A symbolic link is followed (the link stays, the file it
//! points to is written atomically); a device, a pipe or a socket is refused, never opened:
//! opening a FIFO for writing blocks until a reader comes, in a call no signal ends.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// How many symbolic links in a row are followed before giving up (a loop).
const MAX_LINKS: u32 = 40;

/// Writes `path` with what `fill` writes, atomically (see the module doc).
pub fn write(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let target = resolved(path)?;
    file_or_none(&target)?;
    replace(&target, fill)
}

/// `path` with its symbolic links followed, each relative to its own directory: where a
/// write lands, which may not exist yet (a dangling link's target).
fn resolved(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => path = link_target(&path)?,
            _ => return Ok(path),
        }
    }
    Err(io::Error::other(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// Refuses `path` (links followed) when it is there and is not a regular file: what goldgate
/// writes goes into files only. For files written in place as well (GitHub's step summary).
pub fn file_or_none(path: &Path) -> io::Result<()> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(io::Error::other("is a directory: name a file in it")),
        Ok(meta) if !meta.is_file() => Err(io::Error::other(format!(
            "is {}, not a file: goldgate writes its outputs to files only",
            file_kind(meta.file_type())
        ))),
        _ => Ok(()),
    }
}

/// What a path that is not a regular file is, in words.
pub fn file_kind(kind: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a named pipe";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "not a file"
    }
}

/// Where the link at `path` points, relative to the link's own directory.
fn link_target(path: &Path) -> io::Result<PathBuf> {
    let target = fs::read_link(path)?;
    Ok(match path.parent() {
        Some(parent) if target.is_relative() => parent.join(target),
        _ => target,
    })
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
    // The file a link points to is the one written: its directory must take the new file.
    let path = &resolved(path)?;
    file_or_none(path)?;
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
    fn a_device_or_a_pipe_is_refused_never_opened() {
        use std::path::Path;
        let refused = super::write(Path::new("/dev/null"), |out| out.write_all(b"gone"));
        let error = refused.unwrap_err().to_string();
        assert!(
            error.contains("is a character device, not a file"),
            "{error}"
        );
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Opened, this would block: no reader ever comes.
        let error = super::check_writable(&fifo).unwrap_err().to_string();
        assert!(error.contains("is a named pipe, not a file"), "{error}");
        assert!(super::write(&fifo, |out| out.write_all(b"x")).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_link_is_checked_where_it_points() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("report.json");
        std::os::unix::fs::symlink("missing/report.json", &link).unwrap();
        assert!(super::check_writable(&link).is_err());
        fs::create_dir(dir.path().join("missing")).unwrap();
        super::check_writable(&link).unwrap();
    }
}
