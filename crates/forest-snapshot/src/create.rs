//! `create`: bundle the repository, pick the payload files, stream both into
//! a ZIP written beside the target name and renamed into place.
//!
//! Reads the forest (git objects via `git bundle`, payload files); writes only
//! the snapshot file and a temporary directory beside it.

use crate::{git, io_err, SnapshotError, ASSETS_DIR, BUNDLE_MEMBER, CONTAINER_SUFFIX, PAYLOAD_PREFIX, README_MEMBER};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;
use zip::CompressionMethod;

/// What to put in the snapshot.
#[derive(Debug, Clone)]
pub struct CreateOptions {
    /// Carry the payloads (the default; without them their nodes restore dead).
    pub with_payloads: bool,
}

impl Default for CreateOptions {
    fn default() -> Self {
        CreateOptions { with_payloads: true }
    }
}

/// `forest snapshot create --json`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct CreateReport {
    /// Report shape version.
    pub version: u32,
    /// Path of the snapshot file written.
    pub snapshot: String,
    /// Its size in bytes.
    pub bytes: u64,
    /// Payload files carried.
    pub payloads: usize,
    /// Uncompressed bytes of the payloads carried.
    pub payload_bytes: u64,
    /// Payload files left out because `--no-payloads` was given.
    pub payloads_omitted: usize,
    /// Files that look like payloads but cannot travel, each `path: reason`
    /// (symlinks, hidden or non-UTF-8 names: a restore would refuse them).
    pub skipped: Vec<String>,
}

const README: &str = "Forest snapshot: {name} ({stamp})

This file is a ZIP archive, and nothing inside it needs forest software to read:

    unzip <this file>
    git clone {bundle} {name}

That gives you the forest back as ordinary Markdown files, with its full
commit history: the history travels as a plain git bundle.

Dataset databases and media live under {prefix} at the paths they occupy
inside the forest (git does not carry binaries), so they ride beside the
bundle instead of in it. Copy them over the clone:

    cp -R {prefix}. {name}/

A snapshot taken without payloads has no {prefix} directory at all.
Restore with `forest snapshot restore <this file> DIR` or
`vine snapshot restore <this file> --forest DIR`.
";

/// The payload files of a forest, as forest-relative POSIX paths (sorted),
/// and the lines for files that match but cannot travel.
///
/// Same selection as the reference: `*.db`, `*.sqlite` anywhere, every file
/// under a directory named `_assets` at any depth, never under `_derived/`
/// or `.git/`. Stricter in one way: what the restore rules refuse (hidden
/// components, symlinks, backslashes, non-UTF-8 names) is skipped and said,
/// so a snapshot never carries a member that makes it unrestorable.
pub fn payload_files(root: &Path) -> (Vec<String>, Vec<String>) {
    let mut out = vec![];
    let mut skipped = vec![];
    let walker = walkdir::WalkDir::new(root).follow_links(false).sort_by_file_name().into_iter();
    for entry in walker.filter_entry(|e| {
        e.depth() == 0 || !(e.file_type().is_dir() && matches!(e.file_name().to_str(), Some("_derived" | ".git")))
    }) {
        let Ok(entry) = entry else { continue };
        if entry.file_type().is_dir() {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else { continue };
        let parts: Vec<&OsStr> = rel.iter().collect();
        let Some((name, dirs)) = parts.split_last() else { continue };
        let in_assets = dirs.iter().any(|d| *d == OsStr::new(ASSETS_DIR));
        let name_s = name.to_string_lossy();
        let is_db = name_s.ends_with(".db") || name_s.ends_with(".sqlite");
        if !(in_assets || is_db) {
            continue;
        }
        let shown = rel.to_string_lossy().into_owned();
        let Some(rel_s) = rel.to_str() else {
            skipped.push(format!("{shown}: name is not UTF-8"));
            continue;
        };
        if parts.iter().any(|p| p.to_string_lossy().starts_with('.')) {
            // Includes our own staged payloads (`.name.pid.n.staged`).
            skipped.push(format!("{shown}: hidden path component"));
            continue;
        }
        if rel_s.contains('\\') {
            skipped.push(format!("{shown}: backslash in name"));
            continue;
        }
        if entry.file_type().is_symlink() {
            skipped.push(format!("{shown}: symlink (not followed)"));
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        out.push(rel_s.to_string());
    }
    (out, skipped)
}

/// Pack `forest` into one snapshot file. `out` defaults to
/// `<parent>/<name>-<YYYY-MM-DD>.forest`, beside the forest (never inside it).
pub fn create_snapshot(forest: &Path, out: Option<&Path>, opts: &CreateOptions) -> Result<CreateReport, SnapshotError> {
    let root = std::fs::canonicalize(forest).map_err(io_err(format!("cannot open {}", forest.display())))?;
    if !root.join(".git").exists() {
        return Err(SnapshotError::NotARepo(root));
    }
    let name = root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "forest".into());
    let stamp = forest_model::node::today();
    let out: PathBuf = match out {
        Some(o) => o.to_path_buf(),
        None => root.parent().unwrap_or(&root).join(format!("{name}-{stamp}{CONTAINER_SUFFIX}")),
    };
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io_err(format!("cannot create {}", parent.display())))?;

    let (payloads, skipped) = payload_files(&root);
    // The bundle is built outside the forest: inside it, it would be a binary
    // in the work tree and the next snapshot might package the previous one.
    let tmp = tempfile::Builder::new()
        .prefix(".forest-snapshot-")
        .tempdir_in(&parent)
        .map_err(io_err(format!("cannot create a temporary directory in {}", parent.display())))?;
    let bundle = tmp.path().join(BUNDLE_MEMBER);
    git(
        Some(&root),
        &[OsStr::new("bundle"), OsStr::new("create"), OsStr::new("--quiet"), bundle.as_os_str(), OsStr::new("--all")],
    )?;

    let mut file = tempfile::Builder::new()
        .prefix(".forest-snapshot-")
        .suffix(".partial")
        .tempfile_in(&parent)
        .map_err(io_err(format!("cannot create a temporary file in {}", parent.display())))?;
    let mut payload_bytes = 0u64;
    {
        let mut zw = zip::ZipWriter::new(BufWriter::with_capacity(1 << 20, file.as_file_mut()));
        let readme = README
            .replace("{name}", &name)
            .replace("{stamp}", &stamp)
            .replace("{bundle}", BUNDLE_MEMBER)
            .replace("{prefix}", PAYLOAD_PREFIX);
        let deflated = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
        zw.start_file(README_MEMBER, deflated).map_err(zip_err(README_MEMBER))?;
        zw.write_all(readme.as_bytes()).map_err(io_err("cannot write README.txt"))?;
        // A bundle's packfile is already zlib-compressed: stored, not deflated again.
        add_file(&mut zw, BUNDLE_MEMBER, &bundle, CompressionMethod::Stored)?;
        if opts.with_payloads {
            for rel in &payloads {
                // Databases compress well; `_assets/` media and documents do not.
                let method = if rel.ends_with(".db") || rel.ends_with(".sqlite") {
                    CompressionMethod::Deflated
                } else {
                    CompressionMethod::Stored
                };
                payload_bytes += add_file(&mut zw, &format!("{PAYLOAD_PREFIX}{rel}"), &root.join(rel), method)?;
            }
        }
        let mut w = zw.finish().map_err(zip_err("finishing the ZIP directory"))?;
        w.flush().map_err(io_err("cannot write the snapshot"))?;
    }
    file.as_file().sync_all().map_err(io_err("cannot sync the snapshot"))?;
    let bytes = file.as_file().metadata().map_err(io_err("cannot stat the snapshot"))?.len();
    file.persist(&out)
        .map_err(|e| SnapshotError::Io { context: format!("cannot rename into {}", out.display()), source: e.error })?;
    let (carried, omitted) = if opts.with_payloads { (payloads.len(), 0) } else { (0, payloads.len()) };
    Ok(CreateReport {
        version: 1,
        snapshot: out.display().to_string(),
        bytes,
        payloads: carried,
        payload_bytes,
        payloads_omitted: omitted,
        skipped,
    })
}

fn zip_err(what: &str) -> impl FnOnce(zip::result::ZipError) -> SnapshotError + '_ {
    move |source| SnapshotError::Zip { context: what.to_string(), source }
}

/// Stream one file into the archive; returns the bytes copied.
fn add_file<W: Write + std::io::Seek>(
    zw: &mut zip::ZipWriter<W>,
    name: &str,
    path: &Path,
    method: CompressionMethod,
) -> Result<u64, SnapshotError> {
    let f = File::open(path).map_err(io_err(format!("cannot read {}", path.display())))?;
    let len = f.metadata().map_err(io_err(format!("cannot stat {}", path.display())))?.len();
    let opts = SimpleFileOptions::default()
        .compression_method(method)
        .large_file(len >= u64::from(u32::MAX))
        .unix_permissions(0o644);
    zw.start_file(name, opts).map_err(zip_err(name))?;
    std::io::copy(&mut BufReader::with_capacity(1 << 20, f), zw)
        .map_err(io_err(format!("cannot pack {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_selection_matches_the_reference_rules() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        for p in [
            "a.db",
            "b/c.sqlite",
            "b/_assets/x.png",
            "b/_assets/deep/y.pdf",
            "notes.md",
            "b/d.sqlite3",
            "_derived/catalog.db",
            ".git/x.db",
            "b/.hidden.db",
            ".cache/z.db",
            "e/_assets/.a.png.1.2.staged",
        ] {
            let path = r.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, p).unwrap();
        }
        std::os::unix::fs::symlink(r.join("a.db"), r.join("link.db")).unwrap();
        let (files, skipped) = payload_files(r);
        assert_eq!(files, vec!["a.db", "b/_assets/deep/y.pdf", "b/_assets/x.png", "b/c.sqlite"]);
        let mut skipped = skipped;
        skipped.sort();
        assert_eq!(
            skipped,
            vec![
                ".cache/z.db: hidden path component",
                "b/.hidden.db: hidden path component",
                "e/_assets/.a.png.1.2.staged: hidden path component",
                "link.db: symlink (not followed)",
            ]
        );
    }
}
