//! What every fuzz target checks beyond "no panic": the rules tests/it/lint_mutants.rs holds
//! `goldgate lint` to, on the library's own results.

use std::path::Path;
use std::sync::Arc;

use goldgate::diagnostic::Diagnostic;
use goldgate::formats::LoadedFile;

/// The fixed fake path every target loads its input as. Nothing is read from it.
pub fn fake_path(name: &str) -> Arc<Path> {
    Arc::from(Path::new("fuzz").join(name))
}

/// The input as goldgate would see it. Files that are not UTF-8 are refused before any parser
/// runs, so invalid bytes are replaced rather than wasted.
pub fn text(data: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(data)
}

/// Every problem names the file it was loaded as, at a real line, on one printed line.
pub fn check_diagnostics<'a>(path: &Path, diagnostics: impl IntoIterator<Item = &'a Diagnostic>) {
    for d in diagnostics {
        assert_eq!(&*d.location.file, path, "{d}");
        assert!(d.location.line >= 1, "{d}");
        assert!(!d.message.is_empty(), "{d}");
        let printed = d.to_string();
        assert!(!printed.contains('\n'), "{printed}");
        assert!(
            printed.starts_with(&format!("{}:", path.display())),
            "{printed}"
        );
    }
}

/// The diagnostics of a loaded golden. (A file with errors may keep the cases it could build,
/// so its cases are not checked.)
pub fn check_loaded(file: &LoadedFile) {
    check_diagnostics(&file.path, &file.diagnostics);
}
