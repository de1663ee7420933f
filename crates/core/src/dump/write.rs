//! Writing one dump directory, `<dump_dir>/<n>/`, all or nothing.
//!
//! Every file of dump `n` is written into a temporary sibling directory
//! (`<dump_dir>/.<n>.partial-XXXXXX`), which is renamed to `<dump_dir>/<n>` once complete. A
//! failure leaves no `<n>` directory behind (or the previous one untouched). Deviation from the
//! original: writing dump `n` again replaces the whole directory, so no stale files of an
//! earlier run remain next to the new ones.

use std::collections::HashMap;
use std::path::{Component, Path};

use super::blob::{self, ImageFormat};
use super::error::DumpError;
use super::format::Formatted;
use super::options::DumpType;

/// The file name of a blob: `[{kind}.json]{name}`, checked to be one plain file name.
pub(crate) fn blob_file_name(kind: &str, name: &str) -> Result<String, DumpError> {
    let file = format!("[{kind}.json]{name}");
    let mut components = Path::new(&file).components();
    match (components.next(), components.next()) {
        (Some(Component::Normal(_)), None) if !file.contains(['\\', '\0']) => Ok(file),
        _ => Err(DumpError::InvalidName {
            name: name.to_owned(),
            context: "a blob file name".to_owned(),
        }),
    }
}

/// Writes `parts` (`tensors`/`grads` and their formatted structures) as dump `count`.
pub(crate) fn write_dump(
    dump_dir: &Path,
    count: usize,
    parts: &[(&str, Formatted)],
) -> Result<(), DumpError> {
    // Check every name before creating anything. Two tensors whose files differ only in case
    // would overwrite each other on a case-insensitive file system.
    let mut files: HashMap<String, String> = HashMap::new();
    for (kind, formatted) in parts {
        for blob in &formatted.blobs {
            let file = blob_file_name(kind, &blob.name)?;
            let location = format!("{kind}{}", blob.location);
            if let Some(first) = files.insert(file.to_lowercase(), location.clone()) {
                return Err(DumpError::DuplicateBlobFile {
                    file,
                    first,
                    second: location,
                });
            }
        }
    }
    std::fs::create_dir_all(dump_dir).map_err(DumpError::io(dump_dir))?;
    let partial = tempfile::Builder::new()
        .prefix(&format!(".{count}.partial-"))
        .tempdir_in(dump_dir)
        .map_err(DumpError::io(dump_dir))?;
    for (kind, formatted) in parts {
        let json_path = partial.path().join(format!("{kind}.json"));
        let file = std::fs::File::create(&json_path).map_err(DumpError::io(&json_path))?;
        let mut writer = std::io::BufWriter::with_capacity(1 << 20, file);
        formatted
            .json
            .write_python(&mut writer)
            .and_then(|()| std::io::Write::flush(&mut writer))
            .map_err(DumpError::io(&json_path))?;
        for blob in &formatted.blobs {
            let path = partial.path().join(blob_file_name(kind, &blob.name)?);
            let array = blob.data.view();
            match blob.dump_type {
                DumpType::Binary => blob::write_bin_view(&path, array),
                DumpType::Npy => blob::write_npy_view(&path, array),
                DumpType::ImageRgb => blob::write_png_view(&path, array, ImageFormat::Rgb),
                DumpType::ImageBgr => blob::write_png_view(&path, array, ImageFormat::Bgr),
                DumpType::ImageI => blob::write_png_view(&path, array, ImageFormat::Intensity),
                DumpType::Json => Ok(()),
            }?;
        }
    }
    let target = dump_dir.join(count.to_string());
    if target.exists() {
        // Move the old dump aside, put the new one in place, then delete the old one.
        let old = tempfile::Builder::new()
            .prefix(&format!(".{count}.old-"))
            .tempdir_in(dump_dir)
            .map_err(DumpError::io(dump_dir))?;
        let aside = old.path().join("dump");
        std::fs::rename(&target, &aside).map_err(DumpError::io(&target))?;
        if let Err(error) = std::fs::rename(partial.path(), &target) {
            // Put the old dump back; the new one is dropped with `partial`.
            let _ = std::fs::rename(&aside, &target);
            return Err(DumpError::io(&target)(error));
        }
        drop(old);
    } else {
        std::fs::rename(partial.path(), &target).map_err(DumpError::io(&target))?;
    }
    Ok(())
}
