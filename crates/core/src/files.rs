//! Writing files so that a reader never sees half of one.

use std::io::Write;
use std::path::Path;

/// Writes the concatenation of `parts` to `path` through a temporary file in the same directory, renamed into place
/// once complete, so a reader sees the old file or the whole new one (this is about readers,
/// not power loss: there is no fsync). Creates the parent directories.
pub fn write_atomically(path: &Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    for part in parts {
        file.write_all(part)?;
    }
    // Temporary files are private (0600); the result is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        file.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}
