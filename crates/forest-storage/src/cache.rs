//! The remote-payload cache of dialect §8 (`_derived/payloads/`).
//!
//! Invariants:
//! - a file named like a slot is always complete and (when a hash was given)
//!   verified: downloads go to an unnamed `O_TMPFILE` linked into place after
//!   fsync + verification, or (filesystems without it) to
//!   `.<slot>.<pid>.part`, renamed into place and swept by [`PayloadCache::open`];
//! - one slot is downloaded once at a time across threads and processes: an
//!   exclusive `flock` on `<cache_dir>/../payload-locks/<slot>.lock`, outside
//!   the cache dir because the Ranger evicts every regular file in it.

use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::UNIX_EPOCH;

use sha2::{Digest, Sha256};

use crate::location::scheme_of;
use crate::{Rclone, RcloneOptions, S3Client, S3Options, StorageError};

/// Longest basename kept in a slot name (file names are limited to 255
/// bytes; the slot also gets a hash prefix and `.lock`/`.part` suffixes).
const MAX_BASENAME: usize = 180;
/// Suffix of in-flight fallback downloads. It ends in `.part` on purpose: the
/// Ranger's evictor skips exactly those names.
const PART_SUFFIX: &str = ".part";
const COPY_BUF: usize = 1 << 20;

/// `{evicted, kept_bytes}` of one eviction pass (same as the Ranger's report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvictReport {
    /// Files deleted.
    pub evicted: usize,
    /// Bytes left in the cache.
    pub kept_bytes: u64,
}

/// One cached file as seen by the eviction planner.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheFile {
    /// File name inside the cache dir.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in unix seconds: the LRU clock (hits touch it).
    pub mtime: f64,
}

/// Names to delete, oldest mtime first (ties by name), until the total is
/// within `max_gb` decimal GB (budget at least 1 byte). Same plan as the
/// Ranger's `plan_eviction`. Pure.
pub fn plan_eviction(files: &[CacheFile], max_gb: f64) -> Vec<String> {
    let budget = ((max_gb * 1e9) as u64).max(1);
    let mut sorted: Vec<&CacheFile> = files.iter().collect();
    sorted.sort_by(|a, b| a.mtime.total_cmp(&b.mtime).then_with(|| a.name.cmp(&b.name)));
    let mut total: u64 = files.iter().map(|f| f.size).sum();
    let mut out = vec![];
    for f in sorted {
        if total <= budget {
            break;
        }
        total -= f.size;
        out.push(f.name.clone());
    }
    out
}

/// Slot file name of a payload URI (dialect §8): first 16 hex of
/// sha256(URI string) + `-` + basename of the URI path, sanitised (no `/`,
/// never `.` or `..`, no NUL, at most 180 bytes), `payload` when empty.
pub fn slot_name(uri: &str) -> String {
    let digest = hex::encode(Sha256::digest(uri.as_bytes()));
    let after_scheme = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    // The path starts at the first `/` after the host.
    let path = after_scheme.find('/').map_or("", |i| &after_scheme[i..]);
    let base = path.rsplit('/').next().unwrap_or("");
    let mut base: String = base.chars().map(|c| if c == '\0' { '_' } else { c }).collect();
    if base.len() > MAX_BASENAME {
        let mut cut = MAX_BASENAME;
        while !base.is_char_boundary(cut) {
            cut -= 1;
        }
        base.truncate(cut);
    }
    if base.is_empty() || base == "." || base == ".." {
        base = "payload".to_string();
    }
    format!("{}-{base}", &digest[..16])
}

/// Where a payload URI is fetched from.
#[derive(Debug, PartialEq, Eq)]
enum Source {
    File(PathBuf),
    S3 {
        bucket: String,
        key: String,
    },
    /// rclone's name of the file: `REMOTE:path`.
    Rclone(String),
}

/// Resolve a payload URI. `file://` paths are percent-decoded (host empty or
/// `localhost`); `s3://bucket/key` takes everything after the bucket's `/`
/// as the key (S3 keys may hold `?` or `#`), percent-decoded like a path.
fn parse_source(uri: &str) -> Result<Source, StorageError> {
    let bad = |reason: &str| StorageError::InvalidUri { uri: uri.to_string(), reason: reason.to_string() };
    let scheme = scheme_of(uri).ok_or_else(|| bad("not a remote payload URI (scheme://…)"))?;
    let rest = &uri[scheme.len() + 3..];
    match scheme {
        "file" => {
            let (host, path) = rest.find('/').map_or((rest, ""), |i| rest.split_at(i));
            if !(host.is_empty() || host == "localhost") {
                return Err(bad("file:// URIs must have an empty host (file:///abs/path)"));
            }
            if path.is_empty() {
                return Err(bad("empty path"));
            }
            let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
            if bytes.contains(&0) {
                return Err(bad("NUL in path"));
            }
            Ok(Source::File(PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))))
        }
        "s3" => {
            let (bucket, key) = rest.split_once('/').ok_or_else(|| bad("missing object key"))?;
            if bucket.is_empty() {
                return Err(bad("empty bucket name"));
            }
            if key.is_empty() {
                return Err(bad("missing object key"));
            }
            // Keys are percent-encoded in the URIs forest writes (one token,
            // no spaces); decode them back to the key bytes.
            let bytes: Vec<u8> = percent_encoding::percent_decode_str(key).collect();
            let key = String::from_utf8(bytes).map_err(|_| bad("object key is not valid UTF-8"))?;
            Ok(Source::S3 { bucket: bucket.to_string(), key })
        }
        "rclone" => {
            let loc = crate::RcloneLocation::parse(uri)?;
            let file = loc.path.trim_end_matches('/');
            if file.is_empty() || uri.ends_with('/') {
                return Err(bad("missing file path"));
            }
            Ok(Source::Rclone(format!("{}:{file}", loc.remote)))
        }
        other => Err(StorageError::UnsupportedScheme { scheme: other.to_string() }),
    }
}

/// An exclusive `flock` held until dropped (closing the fd releases it).
struct SlotLock {
    _file: File,
}

/// Temp file a download is written to before it is published.
enum Staging {
    /// Unnamed `O_TMPFILE`: a crash leaves nothing behind.
    Anonymous(File),
    /// `.<slot>.<pid>.part`, removed on every failure path.
    Named(File, PathBuf),
}

impl Staging {
    fn file(&mut self) -> &mut File {
        match self {
            Staging::Anonymous(f) | Staging::Named(f, _) => f,
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // After a successful publish the name is gone, so this is a no-op.
        if let Staging::Named(_, p) = self {
            let _ = fs::remove_file(p);
        }
    }
}

/// The payload cache of one forest (`_derived/payloads/`). `Send + Sync`.
pub struct PayloadCache {
    dir: PathBuf,
    lock_dir: PathBuf,
    s3: Mutex<Option<Arc<S3Client>>>,
    s3_options: Option<S3Options>,
    rclone: Rclone,
    use_tmpfile: bool,
    downloads: AtomicU64,
    bytes_downloaded: AtomicU64,
}

impl std::fmt::Debug for PayloadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PayloadCache")
            .field("dir", &self.dir)
            .field("use_tmpfile", &self.use_tmpfile)
            .field("downloads", &self.downloads())
            .finish_non_exhaustive()
    }
}

fn io_err(what: &str, path: &Path, e: io::Error) -> StorageError {
    StorageError::io(format!("{what} {}", path.display()), e)
}

fn cstring(path: &Path) -> Result<CString, StorageError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io_err("NUL in path", path, io::Error::from(io::ErrorKind::InvalidInput)))
}

/// sha256 (hex) of a file, streamed.
fn sha256_file(path: &Path) -> io::Result<String> {
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; COPY_BUF];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex::encode(h.finalize()))
}

/// Set atime and mtime to now (the LRU clock) without opening for write.
fn touch(path: &Path) -> Result<(), StorageError> {
    let c = cstring(path)?;
    // SAFETY: valid NUL-terminated path; a null `times` means "now".
    if unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), std::ptr::null(), 0) } != 0 {
        return Err(io_err("touch", path, io::Error::last_os_error()));
    }
    Ok(())
}

fn open_tmpfile(dir: &Path) -> io::Result<File> {
    OpenOptions::new().read(true).write(true).mode(0o644).custom_flags(libc::O_TMPFILE).open(dir)
}

fn sync_dir(dir: &Path) -> Result<(), StorageError> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_err("fsync", dir, e))
}

impl PayloadCache {
    /// Open (creating) the cache at `cache_dir`. `s3` serves `s3://` URIs;
    /// `None` creates a client from [`S3Options::from_env`] on first use.
    /// Sweeps `.part` leftovers of crashed downloads that nobody holds.
    pub fn open(cache_dir: &Path, s3: Option<Arc<S3Client>>) -> Result<Self, StorageError> {
        Self::open_inner(cache_dir, s3, None)
    }

    /// Like [`PayloadCache::open`], creating the S3 client lazily from `options`.
    pub fn open_with_options(cache_dir: &Path, options: S3Options) -> Result<Self, StorageError> {
        Self::open_inner(cache_dir, None, Some(options))
    }

    fn open_inner(
        cache_dir: &Path,
        s3: Option<Arc<S3Client>>,
        s3_options: Option<S3Options>,
    ) -> Result<Self, StorageError> {
        let dir = cache_dir.to_path_buf();
        fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
        let lock_dir = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.join("payload-locks"),
            Some(_) => PathBuf::from("payload-locks"),
            // `/` as a cache dir: keep the locks in a hidden subdirectory.
            None => dir.join(".payload-locks"),
        };
        fs::create_dir_all(&lock_dir).map_err(|e| io_err("create", &lock_dir, e))?;
        let use_tmpfile = Self::tmpfile_supported(&dir);
        let cache = PayloadCache {
            dir,
            lock_dir,
            s3: Mutex::new(s3),
            s3_options,
            rclone: Rclone::new(RcloneOptions::from_env()),
            use_tmpfile,
            downloads: AtomicU64::new(0),
            bytes_downloaded: AtomicU64::new(0),
        };
        cache.sweep_parts()?;
        Ok(cache)
    }

    /// `O_TMPFILE` works in `dir` and `/proc/self/fd` exists to link it.
    fn tmpfile_supported(dir: &Path) -> bool {
        Path::new("/proc/self/fd").is_dir() && open_tmpfile(dir).is_ok()
    }

    /// Turn the `O_TMPFILE` path off (`false`) or back on when supported;
    /// mainly for tests of the named `.part` fallback.
    pub fn with_tmpfile(mut self, enabled: bool) -> Self {
        self.use_tmpfile = enabled && Self::tmpfile_supported(&self.dir);
        self
    }

    /// Fetch `rclone://` payloads with these options (default: from the
    /// environment, [`RcloneOptions::from_env`]).
    pub fn with_rclone(mut self, opts: RcloneOptions) -> Self {
        self.rclone = Rclone::new(opts);
        self
    }

    /// True when downloads are staged in unnamed `O_TMPFILE`s.
    pub fn uses_tmpfile(&self) -> bool {
        self.use_tmpfile
    }

    /// The cache directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where `uri` is (or would be) cached.
    pub fn slot_path(&self, uri: &str) -> PathBuf {
        self.dir.join(slot_name(uri))
    }

    /// Downloads (fetches from the source) performed by this object.
    pub fn downloads(&self) -> u64 {
        self.downloads.load(Ordering::Relaxed)
    }

    /// Bytes fetched from sources by this object.
    pub fn bytes_downloaded(&self) -> u64 {
        self.bytes_downloaded.load(Ordering::Relaxed)
    }

    /// Remove `.<slot>.<pid>.part` files whose slot lock is free: the lock is
    /// held for a whole download, so a free lock means the writer is dead.
    fn sweep_parts(&self) -> Result<(), StorageError> {
        let entries = fs::read_dir(&self.dir).map_err(|e| io_err("read", &self.dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(slot) = part_slot(name) else { continue };
            if let Some(_lock) = self.lock_slot(slot, false)? {
                match fs::remove_file(entry.path()) {
                    Ok(()) => tracing::info!(file = name, "removed stale partial payload download"),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(io_err("remove", &entry.path(), e)),
                }
            }
        }
        Ok(())
    }

    /// Take the slot's exclusive lock; `Ok(None)` when `blocking` is false
    /// and someone else holds it.
    fn lock_slot(&self, slot: &str, blocking: bool) -> Result<Option<SlotLock>, StorageError> {
        let path = self.lock_dir.join(format!("{slot}.lock"));
        // The cache may have been purged by hand or by the Ranger since open().
        fs::create_dir_all(&self.lock_dir).map_err(|e| io_err("create", &self.lock_dir, e))?;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io_err("open lock", &path, e))?;
        let op = if blocking { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
        loop {
            // SAFETY: flock on an fd owned by `file` for the whole call.
            if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
                return Ok(Some(SlotLock { _file: file }));
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) if !blocking => return Ok(None),
                _ => return Err(io_err("lock", &path, e)),
            }
        }
    }

    fn s3_client(&self) -> Result<Arc<S3Client>, StorageError> {
        // A poisoned mutex only means another thread panicked while building
        // the client; the Option inside is still valid.
        let mut guard = self.s3.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = guard.as_ref() {
            return Ok(Arc::clone(c));
        }
        let options = self.s3_options.clone().unwrap_or_else(S3Options::from_env);
        let client = Arc::new(S3Client::new(&options)?);
        *guard = Some(Arc::clone(&client));
        Ok(client)
    }

    /// A servable cached copy? With `expected`, a mismatching file counts as
    /// a miss and is deleted when `may_delete` (only under the slot lock).
    fn try_hit(&self, path: &Path, expected: Option<&str>, may_delete: bool) -> Result<bool, StorageError> {
        match fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(io_err("stat", path, e)),
        }
        if let Some(want) = expected {
            let have = match sha256_file(path) {
                Ok(h) => h,
                // Evicted between stat and read.
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
                Err(e) => return Err(io_err("hash", path, e)),
            };
            if have != want {
                if may_delete {
                    tracing::warn!(path = %path.display(), "cached payload hash mismatch; re-fetching");
                    match fs::remove_file(path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io_err("remove", path, e)),
                    }
                }
                return Ok(false);
            }
        }
        match touch(path) {
            Ok(()) => Ok(true),
            Err(StorageError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Local path of the payload at `uri` (`file://…` or `s3://bucket/key`),
    /// fetching it on a miss. With `expected_sha256`, a cached copy is served
    /// only if it matches, and a fetched copy that does not match is
    /// discarded with [`StorageError::HashMismatch`]. Concurrent callers
    /// (threads or processes) for one URI fetch it once.
    pub fn get(&self, uri: &str, expected_sha256: Option<&str>) -> Result<PathBuf, StorageError> {
        let source = parse_source(uri)?;
        let expected = expected_sha256.map(|h| h.trim().to_ascii_lowercase());
        let expected = expected.as_deref();
        let slot = slot_name(uri);
        let path = self.dir.join(&slot);
        if self.try_hit(&path, expected, false)? {
            return Ok(path);
        }
        let _lock = self.lock_slot(&slot, true)?;
        // Whoever held the lock before us may have fetched it already.
        if self.try_hit(&path, expected, true)? {
            return Ok(path);
        }
        self.fetch(&source, uri, &slot, &path, expected)?;
        Ok(path)
    }

    fn stage(&self, slot: &str) -> Result<Staging, StorageError> {
        fs::create_dir_all(&self.dir).map_err(|e| io_err("create", &self.dir, e))?;
        if self.use_tmpfile {
            match open_tmpfile(&self.dir) {
                Ok(f) => return Ok(Staging::Anonymous(f)),
                Err(e) => tracing::warn!(error = %e, "O_TMPFILE failed; using a named .part file"),
            }
        }
        let part = self.dir.join(format!(".{slot}.{}{PART_SUFFIX}", std::process::id()));
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&part)
            .map_err(|e| io_err("create", &part, e))?;
        Ok(Staging::Named(f, part))
    }

    /// Fetch into a staging file, verify, fsync, publish under the slot name.
    /// Caller holds the slot lock.
    fn fetch(
        &self,
        source: &Source,
        uri: &str,
        slot: &str,
        path: &Path,
        expected: Option<&str>,
    ) -> Result<(), StorageError> {
        let mut staging = self.stage(slot)?;
        let (size, sha) = match source {
            Source::File(src) => copy_hashing(src, uri, staging.file())?,
            Source::S3 { bucket, key } => {
                let client = self.s3_client()?;
                match client.download_to_writer(bucket, key, staging.file()) {
                    Ok(d) => (d.size, d.sha256_hex),
                    Err(e) if e.is_not_found() => {
                        return Err(StorageError::NotFound { what: "remote payload", target: uri.to_string() })
                    }
                    Err(e) => return Err(e),
                }
            }
            Source::Rclone(target) => match self.rclone.cat_to_writer(target, staging.file()) {
                Ok(d) => (d.size, d.sha256_hex),
                Err(e) if e.is_not_found() => {
                    return Err(StorageError::NotFound { what: "remote payload", target: uri.to_string() })
                }
                Err(e) => return Err(e),
            },
        };
        self.downloads.fetch_add(1, Ordering::Relaxed);
        self.bytes_downloaded.fetch_add(size, Ordering::Relaxed);
        if let Some(want) = expected {
            if sha != want {
                // Dropping `staging` discards the bytes (unnamed or removed).
                return Err(StorageError::HashMismatch {
                    uri: uri.to_string(),
                    expected: want.to_string(),
                    actual: sha,
                });
            }
        }
        staging.file().sync_all().map_err(|e| io_err("fsync download for", path, e))?;
        match &staging {
            Staging::Anonymous(f) => {
                link_tmpfile(f, path)?;
                sync_dir(&self.dir)?;
            }
            Staging::Named(_, part) => {
                forest_fs::atomic_rename(part, path).map_err(|e| io_err("rename into", path, e))?;
            }
        }
        tracing::debug!(%uri, size, "payload cached");
        Ok(())
    }

    /// LRU eviction (dialect §8, H.6): regular files by mtime ascending,
    /// delete oldest until the total is within `max_gb` decimal GB. In-flight
    /// `*.part` downloads are neither counted nor touched (as the Ranger).
    pub fn evict(&self, max_gb: f64) -> Result<EvictReport, StorageError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(EvictReport::default()),
            Err(e) => return Err(io_err("read", &self.dir, e)),
        };
        let mut files = vec![];
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            let Some(name) = entry.file_name().to_str().map(String::from) else { continue };
            if !meta.is_file() || name.ends_with(PART_SUFFIX) {
                continue;
            }
            let mtime =
                meta.modified().ok().and_then(|t| t.duration_since(UNIX_EPOCH).ok()).map_or(0.0, |d| d.as_secs_f64());
            files.push(CacheFile { name, size: meta.len(), mtime });
        }
        let doomed = plan_eviction(&files, max_gb);
        let mut kept: u64 = files.iter().map(|f| f.size).sum();
        for name in &doomed {
            let p = self.dir.join(name);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err("remove", &p, e)),
            }
            kept -= files.iter().find(|f| &f.name == name).map_or(0, |f| f.size);
        }
        Ok(EvictReport { evicted: doomed.len(), kept_bytes: kept })
    }
}

/// The slot of a fallback download name `.<slot>.<pid>.part`.
fn part_slot(name: &str) -> Option<&str> {
    let inner = name.strip_prefix('.')?.strip_suffix(PART_SUFFIX)?;
    let (slot, pid) = inner.rsplit_once('.')?;
    (!slot.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())).then_some(slot)
}

/// Give an `O_TMPFILE` its name. A slot file already there (only possible
/// from a writer that ignores our locks) is replaced.
fn link_tmpfile(f: &File, path: &Path) -> Result<(), StorageError> {
    let proc = CString::new(format!("/proc/self/fd/{}", f.as_raw_fd()))
        .map_err(|_| io_err("link", path, io::Error::from(io::ErrorKind::InvalidInput)))?;
    let dst = cstring(path)?;
    for attempt in 0..2 {
        // SAFETY: both paths are valid NUL-terminated strings; the fd in
        // `proc` stays open (borrowed `f`) for the whole call.
        let rc = unsafe {
            libc::linkat(libc::AT_FDCWD, proc.as_ptr(), libc::AT_FDCWD, dst.as_ptr(), libc::AT_SYMLINK_FOLLOW)
        };
        if rc == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::AlreadyExists && attempt == 0 {
            let _ = fs::remove_file(path);
            continue;
        }
        return Err(io_err("link into", path, e));
    }
    Err(io_err("link into", path, io::Error::from(io::ErrorKind::AlreadyExists)))
}

/// Copy a local `file://` source into `out`, returning (size, sha256 hex).
fn copy_hashing(src: &Path, uri: &str, out: &mut File) -> Result<(u64, String), StorageError> {
    let mut f = match File::open(src) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(StorageError::NotFound { what: "remote payload", target: uri.to_string() })
        }
        Err(e) => return Err(io_err("open", src, e)),
    };
    let mut h = Sha256::new();
    let mut buf = vec![0u8; COPY_BUF];
    let mut size = 0u64;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err("read", src, e)),
        };
        out.write_all(&buf[..n]).map_err(|e| io_err("write copy of", src, e))?;
        h.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, hex::encode(h.finalize())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    fn sha(bytes: &[u8]) -> String {
        hex::encode(Sha256::digest(bytes))
    }

    fn file_uri(p: &Path) -> String {
        const SET: &percent_encoding::AsciiSet =
            &percent_encoding::NON_ALPHANUMERIC.remove(b'/').remove(b'.').remove(b'-').remove(b'_');
        format!("file://{}", percent_encoding::utf8_percent_encode(p.to_str().unwrap(), SET))
    }

    fn list(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    #[test]
    fn slot_names() {
        let uri = "s3://bucket/dir/data.db";
        let s = slot_name(uri);
        assert_eq!(s, format!("{}-data.db", &sha(uri.as_bytes())[..16]));
        assert!(slot_name("s3://bucket/dir/").ends_with("-payload"));
        assert!(slot_name("s3://bucket").ends_with("-payload"));
        assert!(slot_name("file:///x/..").ends_with("-payload"));
        assert!(slot_name("file:///x/.").ends_with("-payload"));
        assert!(slot_name("file:///a/b%20c.db").ends_with("-b%20c.db"));
        let long = format!("s3://b/{}", "é".repeat(200));
        let s = slot_name(&long);
        assert!(s.len() <= 17 + MAX_BASENAME && !s.contains('/'));
        assert_ne!(slot_name("s3://b/x"), slot_name("s3://c/x"));
    }

    #[test]
    fn parses_sources() {
        assert_eq!(parse_source("file:///tmp/a%20b.db").unwrap(), Source::File("/tmp/a b.db".into()));
        assert_eq!(parse_source("file://localhost/tmp/x").unwrap(), Source::File("/tmp/x".into()));
        assert_eq!(
            parse_source("s3://bkt/a/b?c#d").unwrap(),
            Source::S3 { bucket: "bkt".into(), key: "a/b?c#d".into() }
        );
        assert_eq!(
            parse_source("s3://bkt/dir/site%20photo.png").unwrap(),
            Source::S3 { bucket: "bkt".into(), key: "dir/site photo.png".into() }
        );
        let e = parse_source("gs://bkt/x").unwrap_err();
        assert_eq!(e.to_string(), "unsupported payload scheme: gs://");
        for bad in ["s3://bkt", "s3://bkt/", "s3:///k", "file://host/x", "file://", "plain.db", "file:///a%00b"] {
            assert!(matches!(parse_source(bad), Err(StorageError::InvalidUri { .. })), "{bad}");
        }
    }

    #[test]
    fn part_names() {
        assert_eq!(part_slot(".0123456789abcdef-x.db.42.part"), Some("0123456789abcdef-x.db"));
        assert_eq!(part_slot("0123-x.part"), None);
        assert_eq!(part_slot(".x.abc.part"), None);
        assert_eq!(part_slot(".x.db.tmp"), None);
    }

    fn cf(name: &str, size: u64, mtime: f64) -> CacheFile {
        CacheFile { name: name.into(), size, mtime }
    }

    #[test]
    fn eviction_plan_matches_ranger() {
        let files = [cf("b", 10, 2.0), cf("a", 10, 1.0), cf("c", 10, 3.0)];
        assert_eq!(plan_eviction(&files, 20e-9), vec!["a"]);
        assert_eq!(plan_eviction(&files, 10e-9), vec!["a", "b"]);
        assert!(plan_eviction(&files, 5.0).is_empty());
        assert_eq!(plan_eviction(&files, 0.0).len(), 3);
        let tie = [cf("z", 10, 1.0), cf("y", 10, 1.0)];
        assert_eq!(plan_eviction(&tie, 10e-9), vec!["y"]);
    }

    #[test]
    fn file_payloads_hit_miss_and_mismatch() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("src dir/data file.db");
        fs::create_dir_all(src.parent().unwrap()).unwrap();
        fs::write(&src, b"hello payload").unwrap();
        let uri = file_uri(&src);
        let cache_dir = tmp.path().join("_derived/payloads");
        for tmpfile in [true, false] {
            let _ = fs::remove_dir_all(&cache_dir);
            let cache = PayloadCache::open(&cache_dir, None).unwrap().with_tmpfile(tmpfile);
            let good = sha(b"hello payload");
            let p = cache.get(&uri, Some(&good)).unwrap();
            assert_eq!(fs::read(&p).unwrap(), b"hello payload");
            assert_eq!(p, cache.slot_path(&uri));
            assert_eq!(cache.downloads(), 1);
            // Hit: no new download, with or without a hash (upper-case accepted).
            cache.get(&uri, None).unwrap();
            cache.get(&uri, Some(&good.to_uppercase())).unwrap();
            assert_eq!(cache.downloads(), 1);
            // Locks live outside the cache dir.
            assert!(tmp.path().join("_derived/payload-locks").is_dir());
            assert_eq!(list(&cache_dir), vec![slot_name(&uri)]);
            // A tampered cache entry is dropped and re-fetched.
            fs::write(&p, b"tampered").unwrap();
            cache.get(&uri, Some(&good)).unwrap();
            assert_eq!(fs::read(&p).unwrap(), b"hello payload");
            assert_eq!(cache.downloads(), 2);
            // A source that no longer matches: error, nothing served or left.
            fs::remove_file(&p).unwrap();
            let e = cache.get(&uri, Some(&sha(b"other"))).unwrap_err();
            assert!(matches!(e, StorageError::HashMismatch { .. }), "{e}");
            assert_eq!(e.to_string(), format!("remote payload hash mismatch: {uri}"));
            assert!(list(&cache_dir).is_empty(), "{:?}", list(&cache_dir));
            assert_eq!(cache.bytes_downloaded(), 3 * 13);
            // Missing source.
            let missing = file_uri(&tmp.path().join("nope.db"));
            let e = cache.get(&missing, None).unwrap_err();
            assert_eq!(e.to_string(), format!("remote payload not found: {missing}"));
            assert!(list(&cache_dir).is_empty());
        }
    }

    #[test]
    fn stale_parts_are_swept_live_ones_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("payloads");
        let cache = PayloadCache::open(&dir, None).unwrap();
        fs::write(dir.join(".0123456789abcdef-a.db.999999.part"), b"partial").unwrap();
        fs::write(dir.join(".0123456789abcdef-b.db.999998.part"), b"partial").unwrap();
        fs::write(dir.join("0123456789abcdef-c.db"), b"complete").unwrap();
        // Someone is downloading slot b right now.
        let held = cache.lock_slot("0123456789abcdef-b.db", false).unwrap().unwrap();
        let _again = PayloadCache::open(&dir, None).unwrap();
        assert_eq!(list(&dir), vec![".0123456789abcdef-b.db.999998.part", "0123456789abcdef-c.db"]);
        drop(held);
        let _again = PayloadCache::open(&dir, None).unwrap();
        assert_eq!(list(&dir), vec!["0123456789abcdef-c.db"]);
    }

    #[test]
    fn evicts_oldest_and_skips_parts() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("payloads");
        let cache = PayloadCache::open(&dir, None).unwrap();
        for (i, name) in ["old", "mid", "new"].iter().enumerate() {
            let p = dir.join(name);
            fs::write(&p, [b'x'; 10]).unwrap();
            let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + i as u64 * 100);
            File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
        }
        fs::write(dir.join(".s.1.part"), [0u8; 50]).unwrap();
        // A hit touches the LRU clock: "old" becomes the newest.
        touch(&dir.join("old")).unwrap();
        let r = cache.evict(20e-9).unwrap();
        assert_eq!(r, EvictReport { evicted: 1, kept_bytes: 20 });
        assert_eq!(list(&dir), vec![".s.1.part", "new", "old"]);
        assert_eq!(cache.evict(0.0).unwrap(), EvictReport { evicted: 2, kept_bytes: 0 });
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(cache.evict(1.0).unwrap(), EvictReport::default());
    }

    #[test]
    fn cache_is_send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<PayloadCache>();
    }
}
