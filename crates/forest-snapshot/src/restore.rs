//! `restore`: detect the format by content, judge every member, then clone
//! the bundle and stream the payloads into a staging directory beside the
//! target, renamed into place only when everything landed.
//!
//! Reads the snapshot; writes only the staging directory and, at the end, the
//! target (which must be absent or an empty directory).

use crate::{git, io_err, SnapshotError, ASSETS_DIR, BUNDLE_MEMBER, MAX_UNCOMPRESSED, PAYLOAD_PREFIX, README_MEMBER};
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufWriter, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Restore limits.
#[derive(Debug, Clone)]
pub struct RestoreOptions {
    /// Ceiling on the payload members' declared uncompressed total.
    pub max_uncompressed: u64,
}

impl Default for RestoreOptions {
    fn default() -> Self {
        RestoreOptions { max_uncompressed: MAX_UNCOMPRESSED }
    }
}

/// `forest snapshot restore --json`.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct RestoreReport {
    /// Report shape version.
    pub version: u32,
    /// The restored forest directory.
    pub forest: String,
    /// `container` (a `.forest` ZIP) or `bundle` (a bare git bundle, pre-container).
    pub format: String,
    /// HEAD commit of the restored repository (empty when it has none).
    pub head: String,
    /// Node files (`*.md`) in the restored tree.
    pub nodes: usize,
    /// Payload files written.
    pub restored_payloads: usize,
    /// Their bytes.
    pub payload_bytes: u64,
    /// Nodes naming a local payload the restored tree does not have.
    pub payloads_missing: usize,
}

/// How a container member is treated.
#[derive(Debug, PartialEq, Eq)]
pub enum Member<'a> {
    /// `forest.bundle`.
    Bundle,
    /// `README.txt` (not extracted).
    Readme,
    /// A payload, with its forest-relative path.
    Payload(&'a str),
}

/// Judge one member name: the reference's positive rule (a member lands
/// under `payloads/` and nowhere else, and there it is a `*.db`/`*.sqlite`
/// or a file under an `_assets/` directory), with every component checked:
/// no `..`, no hidden component (`payloads/.git/config` would reach the
/// repository git reads next), no empty component, no backslash, no NUL.
pub fn check_member(name: &str) -> Result<Member<'_>, &'static str> {
    if name == BUNDLE_MEMBER {
        return Ok(Member::Bundle);
    }
    if name == README_MEMBER {
        return Ok(Member::Readme);
    }
    if name.contains('\\') {
        return Err("backslash in the name");
    }
    if name.contains('\0') {
        return Err("NUL in the name");
    }
    if name.starts_with('/') {
        return Err("absolute path");
    }
    let Some(rel) = name.strip_prefix(PAYLOAD_PREFIX) else {
        return Err("outside payloads/");
    };
    if rel.starts_with('/') {
        return Err("absolute path");
    }
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.contains(&"..") {
        return Err("parent-directory component (zip slip)");
    }
    if parts.iter().any(|p| p.starts_with('.')) {
        return Err("hidden path component (.git and dotfiles are never payloads)");
    }
    if parts.iter().any(|p| p.is_empty()) {
        return Err("empty path component");
    }
    if !(rel.ends_with(".db") || rel.ends_with(".sqlite") || parts.contains(&ASSETS_DIR)) {
        return Err("not a payload (*.db, *.sqlite or a file under _assets/)");
    }
    Ok(Member::Payload(rel))
}

enum Format {
    Bundle,
    Container(zip::ZipArchive<File>),
}

/// Container or bare bundle, by content, never by the file name. The bundle
/// signature sits at offset 0 and is asked first; a ZIP is found from its tail.
fn detect(path: &Path) -> Result<Format, SnapshotError> {
    let mut f = File::open(path).map_err(io_err(format!("cannot open {}", path.display())))?;
    let mut head = [0u8; 16];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]).map_err(io_err(format!("cannot read {}", path.display())))? {
            0 => break,
            k => n += k,
        }
    }
    let head = &head[..n];
    if head.starts_with(b"# v") && head.windows(10).any(|w| w == b"git bundle") {
        return Ok(Format::Bundle);
    }
    let f = File::open(path).map_err(io_err(format!("cannot open {}", path.display())))?;
    match zip::ZipArchive::new(f) {
        Ok(z) => Ok(Format::Container(z)),
        Err(e) if head.starts_with(b"PK") => {
            Err(SnapshotError::Damaged { path: path.to_path_buf(), detail: e.to_string() })
        }
        Err(_) => Err(SnapshotError::NotASnapshot(path.to_path_buf())),
    }
}

/// A payload member to write: (index in the archive, forest-relative path).
type PayloadPlan = Vec<(usize, String)>;

/// Every member judged before anything lands: the bundle's index and the payloads.
fn plan(zip: &zip::ZipArchive<File>, ceiling: u64) -> Result<(usize, PayloadPlan), SnapshotError> {
    if zip.has_duplicate_names() {
        return Err(SnapshotError::DuplicateMembers);
    }
    let mut bundle = None;
    let mut payloads = vec![];
    let mut total = 0u64;
    for i in 0..zip.len() {
        let e =
            zip.by_index_data(i).map_err(|source| SnapshotError::Zip { context: format!("member #{i}"), source })?;
        let name = e
            .name()
            .map_err(|source| SnapshotError::Zip { context: format!("member #{i} name"), source })?
            .into_owned();
        let refuse = |reason| SnapshotError::RefusedMember { name: name.clone(), reason };
        if e.is_dir() {
            // Directories are implied by the files; an entry for one writes nothing.
            continue;
        }
        if e.encrypted() {
            return Err(refuse("encrypted member"));
        }
        if e.is_symlink() {
            return Err(refuse("symlink member"));
        }
        match check_member(&name).map_err(refuse)? {
            Member::Bundle => bundle = Some(i),
            Member::Readme => {}
            Member::Payload(rel) => {
                total = total.saturating_add(e.size());
                if total > ceiling {
                    return Err(SnapshotError::OverCeiling { declared: total, ceiling });
                }
                payloads.push((i, rel.to_string()));
            }
        }
    }
    let bundle = bundle.ok_or(SnapshotError::NoBundle)?;
    Ok((bundle, payloads))
}

/// Restore `snapshot` into `dest` (absent, or an empty directory).
pub fn restore_snapshot(snapshot: &Path, dest: &Path, opts: &RestoreOptions) -> Result<RestoreReport, SnapshotError> {
    if !snapshot.is_file() {
        return Err(SnapshotError::NotFound(snapshot.to_path_buf()));
    }
    let dest_existed = match std::fs::symlink_metadata(dest) {
        Ok(m) if m.is_dir() => {
            let mut it = std::fs::read_dir(dest).map_err(io_err(format!("cannot read {}", dest.display())))?;
            if it.next().is_some() {
                return Err(SnapshotError::TargetNotEmpty(dest.to_path_buf()));
            }
            true
        }
        Ok(_) => return Err(SnapshotError::TargetNotEmpty(dest.to_path_buf())),
        Err(_) => false,
    };
    let format = detect(snapshot)?;
    let parent = match dest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&parent).map_err(io_err(format!("cannot create {}", parent.display())))?;
    let staging = tempfile::Builder::new()
        .prefix(".forest-restore-")
        .tempdir_in(&parent)
        .map_err(io_err(format!("cannot create a staging directory in {}", parent.display())))?;
    let tree = staging.path().join("forest");
    let (kind, restored, payload_bytes) = match format {
        Format::Bundle => {
            clone(snapshot, &tree)?;
            ("bundle", 0, 0)
        }
        Format::Container(mut zip) => {
            let (bundle_idx, payloads) = plan(&zip, opts.max_uncompressed)?;
            let bundle = staging.path().join(BUNDLE_MEMBER);
            extract_to(&mut zip, bundle_idx, &bundle)?;
            clone(&bundle, &tree)?;
            std::fs::remove_file(&bundle).map_err(io_err("cannot remove the extracted bundle"))?;
            let mut bytes = 0;
            for (idx, rel) in &payloads {
                let target = safe_target(&tree, rel).map_err(|reason| SnapshotError::RefusedMember {
                    name: format!("{PAYLOAD_PREFIX}{rel}"),
                    reason,
                })?;
                bytes += extract_to(&mut zip, *idx, &target)?;
            }
            ("container", payloads.len(), bytes)
        }
    };
    // The clone's `origin` is the extracted bundle, about to be deleted.
    let _ = git(Some(&tree), &[OsStr::new("remote"), OsStr::new("remove"), OsStr::new("origin")]);
    let head =
        git(Some(&tree), &[OsStr::new("rev-parse"), OsStr::new("--verify"), OsStr::new("-q"), OsStr::new("HEAD")])
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
    let (nodes, payloads_missing) = count_nodes(&tree);
    if dest_existed {
        std::fs::remove_dir(dest).map_err(io_err(format!("cannot replace the empty {}", dest.display())))?;
    }
    std::fs::rename(&tree, dest).map_err(io_err(format!("cannot move the restored forest to {}", dest.display())))?;
    Ok(RestoreReport {
        version: 1,
        forest: dest.display().to_string(),
        format: kind.into(),
        head,
        nodes,
        restored_payloads: restored,
        payload_bytes,
        payloads_missing,
    })
}

/// `git clone` with object checks on (a hostile bundle's trees are refused
/// by git), then every branch of the bundle as a local branch: the clone
/// would keep them only as `origin/*`, and `origin` is a temporary file.
fn clone(bundle: &Path, tree: &Path) -> Result<(), SnapshotError> {
    git(
        None,
        &[
            OsStr::new("-c"),
            OsStr::new("transfer.fsckObjects=true"),
            OsStr::new("clone"),
            OsStr::new("--quiet"),
            bundle.as_os_str(),
            tree.as_os_str(),
        ],
    )?;
    git(
        Some(tree),
        &[
            OsStr::new("fetch"),
            OsStr::new("--quiet"),
            OsStr::new("--update-head-ok"),
            bundle.as_os_str(),
            OsStr::new("refs/heads/*:refs/heads/*"),
        ],
    )
    .map(|_| ())
}

/// The path a payload lands at, with its parent directories created. Refuses
/// to write through a symlink the cloned tree carries, or over a non-file.
fn safe_target(tree: &Path, rel: &str) -> Result<PathBuf, &'static str> {
    let mut at = tree.to_path_buf();
    let parts: Vec<&str> = rel.split('/').collect();
    let Some((file, dirs)) = parts.split_last() else { return Err("empty path") };
    for d in dirs {
        at.push(d);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return Err("would write through a symlink in the restored tree"),
            Ok(m) if m.is_dir() => {}
            Ok(_) => return Err("a parent directory is a file in the restored tree"),
            Err(_) => std::fs::create_dir(&at).map_err(|_| "cannot create a parent directory")?,
        }
    }
    at.push(file);
    match std::fs::symlink_metadata(&at) {
        Ok(m) if !m.is_file() => Err("would overwrite a non-file in the restored tree"),
        _ => Ok(at),
    }
}

/// Stream member `idx` to `target` (never following a symlink at the final
/// name), checking the byte count against the declared size (the reader
/// checks the CRC). Returns the bytes written.
fn extract_to(zip: &mut zip::ZipArchive<File>, idx: usize, target: &Path) -> Result<u64, SnapshotError> {
    let mut m = zip.by_index(idx).map_err(|source| SnapshotError::Zip { context: format!("member #{idx}"), source })?;
    let name = m.name().map(|n| n.into_owned()).unwrap_or_else(|_| format!("#{idx}"));
    let declared = m.size();
    let out = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(target)
        .map_err(io_err(format!("cannot write {}", target.display())))?;
    let mut w = BufWriter::with_capacity(1 << 20, out);
    let n = std::io::copy(&mut (&mut m).take(declared.saturating_add(1)), &mut w)
        .map_err(|e| SnapshotError::DamagedMember { name: name.clone(), detail: e.to_string() })?;
    if n != declared {
        return Err(SnapshotError::DamagedMember { name, detail: format!("{n} bytes where {declared} were declared") });
    }
    let f = w.into_inner().map_err(|e| SnapshotError::Io {
        context: format!("cannot write {}", target.display()),
        source: e.into_error(),
    })?;
    f.sync_all().map_err(io_err(format!("cannot sync {}", target.display())))?;
    Ok(n)
}

/// Node files, and nodes whose local `payload` (relative to the node's own
/// folder; remote URIs are skipped) the tree does not have.
fn count_nodes(tree: &Path) -> (usize, usize) {
    let paths = forest_model::walk::node_paths(tree);
    let mut missing = 0;
    for rel in &paths {
        let path = tree.join(rel);
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let Ok(node) = forest_model::node::Node::parse(&text) else { continue };
        let Some(payload) = node.get_str("payload") else { continue };
        if payload.contains("://") {
            continue;
        }
        let dir = path.parent().unwrap_or(tree);
        if !dir.join(&payload).is_file() {
            missing += 1;
        }
    }
    (paths.len(), missing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_rules() {
        assert_eq!(check_member("forest.bundle"), Ok(Member::Bundle));
        assert_eq!(check_member("README.txt"), Ok(Member::Readme));
        assert_eq!(check_member("payloads/a/b.db"), Ok(Member::Payload("a/b.db")));
        assert_eq!(check_member("payloads/x.sqlite"), Ok(Member::Payload("x.sqlite")));
        assert_eq!(check_member("payloads/br/_assets/p.png"), Ok(Member::Payload("br/_assets/p.png")));
        let refused = [
            ("../x", "outside payloads/"),
            ("payloads/../x.db", "parent-directory component (zip slip)"),
            ("payloads/a/../../x.db", "parent-directory component (zip slip)"),
            ("payloads/.git/config", "hidden path component (.git and dotfiles are never payloads)"),
            ("payloads/.git/hooks/x.db", "hidden path component (.git and dotfiles are never payloads)"),
            ("/etc/passwd", "absolute path"),
            ("payloads//etc/x.db", "absolute path"),
            ("payloads/a//x.db", "empty path component"),
            ("payloads\\..\\x.db", "backslash in the name"),
            ("payloads/notes.md", "not a payload (*.db, *.sqlite or a file under _assets/)"),
            ("payloads/", "empty path component"),
            ("forest.bundle2", "outside payloads/"),
            ("payloads/a\0.db", "NUL in the name"),
        ];
        for (name, reason) in refused {
            assert_eq!(check_member(name), Err(reason), "{name}");
        }
    }
}
