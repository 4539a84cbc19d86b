//! git's index file (`.git/index`), updated by streaming instead of loading.
//!
//! libgit2 reads the whole index into memory to change any entry: at 10^6
//! tracked paths that is ~230 MB of entries (the adopt's end-of-run
//! catch-up and every Ranger commit paid it). Here the old file is read
//! entry by entry and merge-joined with the changes, which arrive in git's
//! path order, into `index.lock`; memory is one entry plus the I/O buffers
//! whatever the forest's size.
//!
//! In: the old index (versions 2, 3 and 4), changes in strictly ascending
//! path-byte order (the order a tree walk yields them). Out: a version 2
//! index (3 when a kept entry carries extended flags) with a fresh
//! checksum; optional extensions (the cache tree, the untracked cache, ...)
//! are dropped, as git allows: git rebuilds them when it needs them.
//! Touches `.git/index.lock` and `.git/index` only, with git's lock-file
//! protocol (exclusive create, then rename), so git and libgit2 see either
//! the old index or the new one. A required extension (split or sparse
//! index) is reported as [`Streamed::Unsupported`] before anything is
//! replaced: a split index is folded by `git update-index
//! --no-split-index` and streamed again, anything else falls back to
//! libgit2's load-edit-write.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use git2::{IndexEntry, IndexTime, Oid};
use sha1::{Digest, Sha1};

use crate::GitError;

/// Fixed part of an entry before the flags (10 x u32 + 20-byte id).
const STAT_AND_ID: usize = 60;
/// `flags` bit: the entry carries a second, extended flags field (v3+).
const EXTENDED: u16 = 0x4000;
/// Longest name length the 12-bit flags field holds (longer: 0xFFF).
const NAME_MASK: u16 = 0x0FFF;

/// Outcome of a streamed update.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Streamed {
    /// The new index is in place; this many changes were applied.
    Done(usize),
    /// The old index uses a format this module does not rewrite (an index
    /// version other than 2-4 or a required extension); nothing changed.
    Unsupported(String),
}

/// One old index entry, raw: the fixed stat/id part, its flags, extended
/// flags and path.
struct RawEntry {
    fixed: [u8; STAT_AND_ID],
    flags: u16,
    ext_flags: Option<u16>,
    path: Vec<u8>,
}

/// Reads the old index entry by entry.
struct OldIndex {
    r: BufReader<File>,
    version: u32,
    left: u32,
    prev_path: Vec<u8>,
}

impl OldIndex {
    fn open(path: &Path) -> Result<Option<OldIndex>, GitError> {
        let f = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(GitError::io(format!("open {}", path.display()), e)),
        };
        let mut r = BufReader::with_capacity(1 << 20, f);
        let mut head = [0u8; 12];
        r.read_exact(&mut head).map_err(|e| GitError::io(format!("read {}", path.display()), e))?;
        if &head[..4] != b"DIRC" {
            return Err(GitError::io(
                format!("read {}", path.display()),
                io::Error::new(io::ErrorKind::InvalidData, "not a git index (no DIRC signature)"),
            ));
        }
        let version = be32(&head[4..8]);
        let left = be32(&head[8..12]);
        Ok(Some(OldIndex { r, version, left, prev_path: Vec::new() }))
    }

    fn next(&mut self) -> io::Result<Option<RawEntry>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut fixed = [0u8; STAT_AND_ID];
        self.r.read_exact(&mut fixed)?;
        let flags = self.read_u16()?;
        let ext_flags = if flags & EXTENDED != 0 { Some(self.read_u16()?) } else { None };
        let header = STAT_AND_ID + 2 + if ext_flags.is_some() { 2 } else { 0 };
        let path = if self.version >= 4 {
            // Prefix compression: drop N bytes of the previous path, then a
            // NUL-terminated suffix; no padding.
            let strip = self.read_varint()? as usize;
            if strip > self.prev_path.len() {
                return Err(invalid("index v4 entry strips more than the previous path"));
            }
            let mut p = self.prev_path[..self.prev_path.len() - strip].to_vec();
            let mut suffix = Vec::new();
            self.r.read_until_nul(&mut suffix)?;
            p.extend_from_slice(&suffix);
            self.prev_path.clone_from(&p);
            p
        } else {
            let mut p = Vec::new();
            self.r.read_until_nul(&mut p)?;
            // 1-8 NULs pad the entry to a multiple of 8; one was just read.
            let pad = padded_len(header, p.len()) - header - p.len() - 1;
            let mut skip = [0u8; 8];
            self.r.read_exact(&mut skip[..pad])?;
            p
        };
        Ok(Some(RawEntry { fixed, flags, ext_flags, path }))
    }

    /// The extension signatures after the last entry (names only; each
    /// extension's body is skipped, the 20-byte checksum ends the file).
    fn extensions(&mut self) -> io::Result<Vec<[u8; 4]>> {
        let total = self.r.get_ref().metadata()?.len();
        let mut pos = self.r.stream_position()?;
        let mut names = Vec::new();
        while pos + 8 + 20 <= total {
            let mut head = [0u8; 8];
            self.r.read_exact(&mut head)?;
            let size = u64::from(be32(&head[4..8]));
            names.push([head[0], head[1], head[2], head[3]]);
            let skip = i64::try_from(size).map_err(|_| invalid("index extension too large"))?;
            self.r.seek_relative(skip)?;
            pos += 8 + size;
        }
        Ok(names)
    }

    fn read_u16(&mut self) -> io::Result<u16> {
        let mut b = [0u8; 2];
        self.r.read_exact(&mut b)?;
        Ok(u16::from_be_bytes(b))
    }

    /// git's offset varint (`decode_varint` in varint.c).
    fn read_varint(&mut self) -> io::Result<u64> {
        let mut b = [0u8; 1];
        self.r.read_exact(&mut b)?;
        let mut val = u64::from(b[0] & 127);
        while b[0] & 128 != 0 {
            val = val.checked_add(1).ok_or_else(|| invalid("index varint overflow"))?;
            self.r.read_exact(&mut b)?;
            val = val.checked_mul(128).ok_or_else(|| invalid("index varint overflow"))? + u64::from(b[0] & 127);
        }
        Ok(val)
    }
}

trait ReadUntilNul {
    fn read_until_nul(&mut self, out: &mut Vec<u8>) -> io::Result<()>;
}

impl<R: io::BufRead> ReadUntilNul for R {
    fn read_until_nul(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let n = self.read_until(0, out)?;
        if n == 0 || out.last() != Some(&0) {
            return Err(invalid("index entry path not NUL-terminated"));
        }
        out.pop();
        Ok(())
    }
}

fn invalid(msg: &'static str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// Length of a v2/v3 entry with `header` bytes before a `name`-byte path:
/// NUL-padded to a multiple of 8 with at least one NUL.
fn padded_len(header: usize, name: usize) -> usize {
    (header + name + 8) & !7
}

/// A change for [`update`]: the path's new blob and the size git records
/// when the file cannot be stat'ed, or `None` to remove the path.
pub(crate) type Target = Option<(Oid, u64)>;

/// Receives the changes of an update in ascending path order.
pub(crate) trait Sink {
    /// Set (`Some`) or remove (`None`) the entry of `rel`.
    fn set(&mut self, rel: &str, target: Target) -> Result<(), GitError>;
}

/// The new index being written to `index.lock`.
struct Merge<'a> {
    root: &'a Path,
    old: Option<OldIndex>,
    /// The next old entry not yet copied or dropped.
    pending: Option<RawEntry>,
    out: BufWriter<File>,
    written: u32,
    extended: bool,
    changes: usize,
    last: Vec<u8>,
}

impl Merge<'_> {
    fn pull(&mut self) -> Result<(), GitError> {
        if self.pending.is_none() {
            if let Some(old) = &mut self.old {
                self.pending = old.next().map_err(|e| GitError::io("read .git/index", e))?;
            }
        }
        Ok(())
    }

    fn copy(&mut self, e: &RawEntry) -> Result<(), GitError> {
        let mut flags = e.flags;
        // A v4 entry's name length is not stored differently; keep the bits.
        flags = (flags & !NAME_MASK) | (e.path.len().min(NAME_MASK as usize) as u16);
        self.emit(&e.fixed, flags, e.ext_flags, &e.path)
    }

    fn emit(&mut self, fixed: &[u8; STAT_AND_ID], flags: u16, ext: Option<u16>, path: &[u8]) -> Result<(), GitError> {
        let io = |e| GitError::io("write .git/index.lock", e);
        self.out.write_all(fixed).map_err(io)?;
        self.out.write_all(&flags.to_be_bytes()).map_err(io)?;
        let mut header = STAT_AND_ID + 2;
        if let Some(x) = ext {
            self.out.write_all(&x.to_be_bytes()).map_err(io)?;
            header += 2;
            self.extended = true;
        }
        self.out.write_all(path).map_err(io)?;
        let pad = padded_len(header, path.len()) - header - path.len();
        self.out.write_all(&[0u8; 8][..pad]).map_err(io)?;
        self.written += 1;
        Ok(())
    }
}

impl Sink for Merge<'_> {
    fn set(&mut self, rel: &str, target: Target) -> Result<(), GitError> {
        let key = rel.as_bytes();
        if !self.last.is_empty() && key <= self.last.as_slice() {
            return Err(GitError::io(
                "update .git/index",
                io::Error::new(io::ErrorKind::InvalidInput, format!("changes out of path order at {rel:?}")),
            ));
        }
        self.last.clear();
        self.last.extend_from_slice(key);
        self.changes += 1;
        // Copy the old entries before `rel`, drop every stage of `rel`.
        loop {
            self.pull()?;
            let Some(e) = self.pending.take() else { break };
            match e.path.as_slice().cmp(key) {
                std::cmp::Ordering::Less => self.copy(&e)?,
                std::cmp::Ordering::Equal => {}
                std::cmp::Ordering::Greater => {
                    self.pending = Some(e);
                    break;
                }
            }
        }
        if let Some((id, len)) = target {
            let fixed = stat_fixed(&self.root.join(rel), id, len);
            let flags = key.len().min(NAME_MASK as usize) as u16;
            self.emit(&fixed, flags, None, key)?;
        }
        Ok(())
    }
}

/// The stat and id part of a new entry, from the work-tree file, so
/// `git status` sees the path clean without re-hashing it.
fn stat_fixed(abs: &Path, id: Oid, len: u64) -> [u8; STAT_AND_ID] {
    // Truncations follow git's own index format (32-bit fields).
    let words: [u32; 10] = match fs::metadata(abs) {
        Ok(m) => [
            m.ctime() as u32,
            m.ctime_nsec() as u32,
            m.mtime() as u32,
            m.mtime_nsec() as u32,
            m.dev() as u32,
            m.ino() as u32,
            0o100644,
            m.uid(),
            m.gid(),
            m.size() as u32,
        ],
        // Zero stat data only makes git re-hash the file: still correct.
        Err(_) => [0, 0, 0, 0, 0, 0, 0o100644, 0, 0, len as u32],
    };
    let mut fixed = [0u8; STAT_AND_ID];
    for (i, w) in words.iter().enumerate() {
        fixed[i * 4..i * 4 + 4].copy_from_slice(&w.to_be_bytes());
    }
    fixed[40..60].copy_from_slice(id.as_bytes());
    fixed
}

/// Rewrite `git_dir/index`: the old entries (none when `clear`) merged with
/// what `feed` sends its sink, in path order. See the module doc.
pub(crate) fn update(
    git_dir: &Path,
    root: &Path,
    clear: bool,
    feed: &mut dyn FnMut(&mut dyn Sink) -> Result<(), GitError>,
) -> Result<Streamed, GitError> {
    let index_path = git_dir.join("index");
    let lock_path = git_dir.join("index.lock");
    let old = if clear { None } else { OldIndex::open(&index_path)? };
    if let Some(o) = &old {
        if !(2..=4).contains(&o.version) {
            return Ok(Streamed::Unsupported(format!("index version {}", o.version)));
        }
    }
    let lock = OpenOptions::new().write(true).read(true).create_new(true).open(&lock_path).map_err(|e| {
        let what = if e.kind() == io::ErrorKind::AlreadyExists { "another git process holds" } else { "create" };
        GitError::io(format!("{what} {}", lock_path.display()), e)
    })?;
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, lock);
        out.write_all(&[0u8; 12]).map_err(|e| GitError::io("write .git/index.lock", e))?;
        let mut m = Merge { root, old, pending: None, out, written: 0, extended: false, changes: 0, last: Vec::new() };
        feed(&mut m)?;
        // The rest of the old entries.
        loop {
            m.pull()?;
            let Some(e) = m.pending.take() else { break };
            m.copy(&e)?;
        }
        if let Some(old) = &mut m.old {
            let names = old.extensions().map_err(|e| GitError::io("read .git/index", e))?;
            if let Some(req) = names.iter().find(|n| !n[0].is_ascii_uppercase()) {
                return Ok(Streamed::Unsupported(format!(
                    "required index extension {:?}",
                    String::from_utf8_lossy(req)
                )));
            }
        }
        let (written, extended, changes) = (m.written, m.extended, m.changes);
        let mut f = m.out.into_inner().map_err(|e| GitError::io("write .git/index.lock", e.into_error()))?;
        let mut head = [0u8; 12];
        head[..4].copy_from_slice(b"DIRC");
        head[4..8].copy_from_slice(&(if extended { 3u32 } else { 2 }).to_be_bytes());
        head[8..12].copy_from_slice(&written.to_be_bytes());
        let io = |e| GitError::io("write .git/index.lock", e);
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        f.write_all(&head).map_err(io)?;
        // The trailer hashes everything before it: read the file back once
        // (sequential, from the page cache) rather than hold it.
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut hasher = Sha1::new();
        let mut buf = vec![0u8; 1 << 20];
        loop {
            let n = f.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
        }
        f.write_all(&hasher.finalize()).map_err(io)?;
        f.sync_data().map_err(io)?;
        Ok(Streamed::Done(changes))
    })();
    match &result {
        Ok(Streamed::Done(_)) => fs::rename(&lock_path, &index_path)
            .map_err(|e| GitError::io(format!("rename {}", lock_path.display()), e))?,
        _ => {
            let _ = fs::remove_file(&lock_path);
        }
    }
    result
}

/// Applies changes to libgit2's in-memory index (the fallback).
struct Libgit2Sink<'a> {
    index: &'a mut git2::Index,
    root: &'a Path,
    changes: usize,
}

impl Sink for Libgit2Sink<'_> {
    fn set(&mut self, rel: &str, target: Target) -> Result<(), GitError> {
        self.changes += 1;
        set_index_entry(self.index, self.root, rel, target)
    }
}

/// Set one path's index entry to `target` (blob id, size) or remove it.
fn set_index_entry(
    index: &mut git2::Index,
    root: &Path,
    rel: &str,
    target: Option<(Oid, u64)>,
) -> Result<(), GitError> {
    match target {
        Some((oid, len)) => index.add(&index_entry(root, rel, oid, len))?,
        None => {
            if index.get_path(Path::new(rel), 0).is_some() {
                index.remove_path(Path::new(rel))?;
            }
        }
    }
    Ok(())
}

/// An index entry carrying the file's stat data, so `git status` sees the
/// path clean without re-hashing it.
fn index_entry(root: &Path, rel: &str, id: Oid, len: u64) -> IndexEntry {
    // Truncations below follow git's own index format (32-bit fields).
    let (ctime, mtime, dev, ino, uid, gid, size) = match fs::metadata(root.join(rel)) {
        Ok(m) => (
            IndexTime::new(m.ctime() as i32, m.ctime_nsec() as u32),
            IndexTime::new(m.mtime() as i32, m.mtime_nsec() as u32),
            m.dev() as u32,
            m.ino() as u32,
            m.uid(),
            m.gid(),
            m.size() as u32,
        ),
        // Zero stat data only makes git re-hash the file: still correct.
        Err(_) => (IndexTime::new(0, 0), IndexTime::new(0, 0), 0, 0, 0, 0, len as u32),
    };
    IndexEntry {
        ctime,
        mtime,
        dev,
        ino,
        mode: 0o100644,
        uid,
        gid,
        file_size: size,
        id,
        flags: 0,
        flags_extended: 0,
        path: rel.as_bytes().to_vec(),
    }
}

/// [`update`], or libgit2's load-edit-write when the old index is in a
/// format [`update`] does not rewrite. Returns the changes applied.
pub(crate) fn update_or_fallback(
    repo: &git2::Repository,
    root: &Path,
    clear: bool,
    feed: &mut dyn FnMut(&mut dyn Sink) -> Result<(), GitError>,
) -> Result<usize, GitError> {
    let mut outcome = update(repo.path(), root, clear, feed)?;
    if matches!(&outcome, Streamed::Unsupported(why) if why.contains("link")) {
        // A split index (libgit2 cannot read one either): let git fold it
        // into one plain index, then stream that.
        tracing::info!(event = "git.index_unsplit");
        let folded = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(repo.path())
            .arg("--work-tree")
            .arg(root)
            .args(["update-index", "--no-split-index"])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status();
        if matches!(folded, Ok(s) if s.success()) {
            outcome = update(repo.path(), root, clear, feed)?;
        }
    }
    match outcome {
        Streamed::Done(n) => Ok(n),
        Streamed::Unsupported(why) => {
            tracing::info!(event = "git.index_fallback", reason = %why);
            let mut index = repo.index()?;
            index.read(false)?;
            if clear {
                index.clear()?;
            }
            let mut sink = Libgit2Sink { index: &mut index, root, changes: 0 };
            feed(&mut sink)?;
            let n = sink.changes;
            index.write()?;
            Ok(n)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_keeps_one_nul_and_a_multiple_of_eight() {
        for name in 0..40 {
            for header in [62, 64] {
                let len = padded_len(header, name);
                assert_eq!(len % 8, 0);
                assert!(len > header + name && len <= header + name + 8, "{header} {name} -> {len}");
            }
        }
        // git's own example: a 62-byte header and a 10-byte name take 72 bytes + NUL -> 80.
        assert_eq!(padded_len(62, 10), 80);
    }
}
