//! rclone sources (`rclone:REMOTE:path`): every backend rclone speaks
//! (Google Drive, SharePoint/OneDrive, Dropbox, Box, SMB, WebDAV, SFTP, ...)
//! through the `rclone` binary the operator already configures, instead of
//! a home-made client per cloud.
//!
//! - Listing: `rclone lsjson --recursive --files-only`, parsed as a stream
//!   (one array element at a time) and put into byte order of the path by an
//!   external merge sort ([`Rclone::list_sorted`]): memory holds one run of
//!   [`RUN_ENTRIES`] entries, never the whole listing.
//! - Change signal: size, modification time and, where the backend stores
//!   one, its hash (asked for by type, so rclone never reads a file to hash
//!   it) or its object ID.
//! - Bytes: `rclone cat`, streamed and hashed (blake3 + sha256) on the way.
//!
//! Which config is used is explicit ([`RcloneOptions::config`], else
//! rclone's own `RCLONE_CONFIG`/default). Connection-string remotes
//! (`:backend,key=value:`) are refused: they would put credentials into the
//! forest's config. rclone's stderr is reduced to its last error line, which
//! names paths, never credentials held in the config file.

use crate::client::Downloaded;
use crate::StorageError;
use serde::de::{SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest, Sha256};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};

/// Entries per sorted run of the external sort (about 10 MB of paths).
pub const RUN_ENTRIES: usize = 65_536;

/// Characters kept unencoded in the path of an `rclone://` URI.
const URI_PATH_SET: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// A remote of the rclone config plus a path under it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RcloneLocation {
    /// The remote's name in the rclone config (never a connection string).
    pub remote: String,
    /// Path under the remote: empty, or ending with `/` (kept as written:
    /// `/abs/` and `rel/` differ on SFTP).
    pub path: String,
}

impl RcloneLocation {
    /// Parse `rclone:REMOTE:path` (rclone's own syntax behind `rclone:`) or
    /// `rclone://REMOTE/path` (the URI form passports record).
    pub fn parse(uri: &str) -> Result<Self, StorageError> {
        let bad = |reason: &str| StorageError::InvalidUri { uri: uri.to_string(), reason: reason.to_string() };
        let (remote, path) = if let Some(rest) = uri.strip_prefix("rclone://") {
            let (remote, path) = rest.split_once('/').unwrap_or((rest, ""));
            let bytes: Vec<u8> = percent_encoding::percent_decode_str(path).collect();
            let path = String::from_utf8(bytes).map_err(|_| bad("path is not UTF-8"))?;
            (remote.to_string(), path)
        } else if let Some(rest) = uri.strip_prefix("rclone:") {
            if rest.starts_with(':') {
                return Err(bad(
                    "connection-string remotes are refused (they would put credentials into the forest): \
                     name a remote of the rclone config",
                ));
            }
            let (remote, path) = rest.split_once(':').ok_or_else(|| bad("expected rclone:REMOTE:path"))?;
            (remote.to_string(), path.to_string())
        } else {
            return Err(bad("expected rclone:REMOTE:path"));
        };
        if remote.is_empty() {
            return Err(bad("empty remote name"));
        }
        let name_ok = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '+' | '@' | ' ');
        if !remote.chars().all(name_ok) || remote.starts_with(['-', ' ']) {
            return Err(bad("not a remote name of the rclone config"));
        }
        if path.contains('\0') || path.chars().any(char::is_control) {
            return Err(bad("control character in path"));
        }
        if path.split('/').any(|c| c == "..") {
            return Err(bad("'..' in path"));
        }
        let mut path = path;
        if !path.is_empty() && !path.ends_with('/') {
            path.push('/');
        }
        Ok(RcloneLocation { remote, path })
    }

    /// The URI form: `rclone://REMOTE/path` (path percent-encoded).
    pub fn uri(&self) -> String {
        self.object_uri("")
    }

    /// The URI of a file `rel` below this location.
    pub fn object_uri(&self, rel: &str) -> String {
        let p = format!("{}{rel}", self.path);
        format!("rclone://{}/{}", self.remote, percent_encoding::utf8_percent_encode(&p, URI_PATH_SET))
    }

    /// rclone's own name of `rel` below this location: `REMOTE:path/rel`.
    pub fn target(&self, rel: &str) -> String {
        format!("{}:{}{rel}", self.remote, self.path)
    }
}

impl std::fmt::Display for RcloneLocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "rclone:{}:{}", self.remote, self.path)
    }
}

/// How to run rclone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RcloneOptions {
    /// The binary (`FOREST_RCLONE`, else `rclone` on `PATH`).
    pub bin: PathBuf,
    /// `--config FILE` (else rclone's `RCLONE_CONFIG` or its default).
    pub config: Option<PathBuf>,
    /// Hash type asked of the listing: `None` = decided by the remote's
    /// type ([`stored_hash_for`]), `Some("none")` = never.
    pub hash: Option<String>,
    /// Parallel transfers of a batch download ([`Rclone::copy_listed`]):
    /// `FOREST_RCLONE_TRANSFERS`, default 8.
    pub transfers: usize,
}

impl RcloneOptions {
    /// Options from the environment: `FOREST_RCLONE` and `RCLONE_CONFIG`.
    pub fn from_env() -> Self {
        RcloneOptions {
            bin: std::env::var_os("FOREST_RCLONE").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("rclone")),
            config: std::env::var_os("RCLONE_CONFIG").filter(|v| !v.is_empty()).map(PathBuf::from),
            hash: None,
            transfers: std::env::var("FOREST_RCLONE_TRANSFERS")
                .ok()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .unwrap_or(8),
        }
    }
}

/// The hash a backend type keeps with each object, so that listing it
/// reads no file (`None`: the backend would compute it by reading).
pub fn stored_hash_for(backend: &str) -> Option<&'static str> {
    Some(match backend {
        "s3" | "drive" | "azureblob" | "google cloud storage" | "swift" | "qingstor" | "oos" => "md5",
        "dropbox" => "dropbox",
        "onedrive" => "quickxor",
        "box" | "b2" | "pcloud" | "hidrive" | "putio" => "sha1",
        _ => return None,
    })
}

/// One listed file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RcloneEntry {
    /// Path relative to the listed location (rclone's `Path`).
    pub path: String,
    /// Size in bytes (0 when the backend does not know it, e.g. Google Docs).
    pub size: u64,
    /// Modification time, ms since the epoch.
    pub mtime_ms: i64,
    /// The backend's change token: `TYPE:hash`, `id:ID` or empty.
    pub etag: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LsJson {
    path: String,
    #[serde(default)]
    size: i64,
    #[serde(default)]
    mod_time: String,
    #[serde(default)]
    is_dir: bool,
    #[serde(default)]
    hashes: Option<BTreeMap<String, String>>,
    #[serde(rename = "ID", default)]
    id: Option<String>,
}

impl LsJson {
    fn entry(self) -> RcloneEntry {
        let mtime_ms = chrono::DateTime::parse_from_rfc3339(&self.mod_time).map_or(0, |t| t.timestamp_millis());
        let etag = match (self.hashes.and_then(|h| h.into_iter().find(|(_, v)| !v.is_empty())), self.id) {
            (Some((t, v)), _) => format!("{t}:{v}"),
            (None, Some(id)) if !id.is_empty() => format!("id:{id}"),
            _ => String::new(),
        };
        RcloneEntry { path: self.path, size: self.size.max(0) as u64, mtime_ms, etag }
    }
}

/// Runs the rclone binary. Cheap to clone; `Send + Sync`.
#[derive(Debug, Clone)]
pub struct Rclone {
    opts: RcloneOptions,
}

/// The last lines rclone wrote on stderr (bounded), read on a thread so a
/// chatty rclone never blocks on a full pipe.
struct Stderr(std::thread::JoinHandle<Vec<String>>);

impl Stderr {
    fn collect(child: &mut Child) -> Stderr {
        let err = child.stderr.take();
        Stderr(std::thread::spawn(move || {
            let mut last: Vec<String> = Vec::new();
            if let Some(e) = err {
                for line in BufReader::new(e).lines().map_while(Result::ok) {
                    if last.len() == 4 {
                        last.remove(0);
                    }
                    last.push(line.chars().take(400).collect());
                }
            }
            last
        }))
    }

    /// The most telling line: the last one, without rclone's timestamp.
    fn message(self) -> String {
        let lines = self.0.join().unwrap_or_default();
        let line = lines.iter().rev().find(|l| !l.trim().is_empty()).cloned().unwrap_or_default();
        // "2026/12/03 06:54:20 Failed to ...": drop date and time.
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some(d), Some(t), Some(rest)) if d.contains('/') && t.contains(':') => rest.to_string(),
            _ => line,
        }
    }
}

impl Rclone {
    /// A runner with these options (nothing is started yet).
    pub fn new(opts: RcloneOptions) -> Self {
        Rclone { opts }
    }

    /// The options.
    pub fn options(&self) -> &RcloneOptions {
        &self.opts
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.opts.bin);
        if let Some(cfg) = &self.opts.config {
            c.arg("--config").arg(cfg);
        }
        // Never prompt (an encrypted config without its password fails).
        // Google-native documents are listed and read as their office
        // export (`Plan.docx`), which the converters read; the flag is
        // inert for other backends.
        c.args(["--ask-password=false", "--drive-export-formats", "docx,xlsx,pptx"]);
        c.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        c
    }

    fn spawn(&self, mut c: Command) -> Result<(Child, Stderr), StorageError> {
        let mut child = c.spawn().map_err(|e| match e.kind() {
            io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied => {
                StorageError::RcloneMissing { bin: self.opts.bin.display().to_string() }
            }
            _ => StorageError::io(format!("run {}", self.opts.bin.display()), e),
        })?;
        let err = Stderr::collect(&mut child);
        Ok((child, err))
    }

    fn failed(op: &'static str, target: &str, status: ExitStatus, err: Stderr) -> StorageError {
        let message = err.message();
        match status.code() {
            Some(3) | Some(4) => StorageError::NotFound { what: "rclone object", target: target.to_string() },
            code => StorageError::Rclone { op, target: target.to_string(), code, message },
        }
    }

    /// The type of `remote` in the config (`webdav`, `drive`, ...);
    /// [`StorageError::Rclone`] naming the remote when it is not configured.
    pub fn remote_type(&self, remote: &str) -> Result<String, StorageError> {
        let (mut child, err) = self.spawn(self.command(&["listremotes", "--long"]))?;
        let mut out = String::new();
        child.stdout.take().map(|mut o| o.read_to_string(&mut out));
        let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
        if !status.success() {
            return Err(Self::failed("listremotes", remote, status, err));
        }
        out.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(name, _)| name.trim() == remote)
            .map(|(_, ty)| ty.trim().to_string())
            .ok_or_else(|| StorageError::Rclone {
                op: "listremotes",
                target: format!("{remote}:"),
                code: None,
                message: "no such remote in the rclone config (check RCLONE_CONFIG / --rclone-config)".into(),
            })
    }

    /// The hash type to ask the listing for (see [`RcloneOptions::hash`]).
    pub fn hash_type(&self, loc: &RcloneLocation) -> Result<Option<String>, StorageError> {
        match self.opts.hash.as_deref() {
            Some("none") | Some("") => Ok(None),
            Some(t) => Ok(Some(t.to_string())),
            None => Ok(stored_hash_for(&self.remote_type(&loc.remote)?).map(str::to_string)),
        }
    }

    /// Every file under `loc`, in rclone's order (not sorted), one at a
    /// time. An error of any directory fails the whole listing.
    pub fn list_each(
        &self,
        loc: &RcloneLocation,
        hash: Option<&str>,
        sink: &mut dyn FnMut(RcloneEntry),
    ) -> Result<u64, StorageError> {
        let target = loc.target("");
        let mut args = vec!["lsjson", "--recursive", "--files-only", "--no-mimetype"];
        if let Some(h) = hash {
            args.extend(["--hash", "--hash-type", h]);
        }
        args.push(&target);
        let (mut child, err) = self.spawn(self.command(&args))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let parsed = stream_array(BufReader::new(stdout), sink);
        let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
        if !status.success() {
            return Err(Self::failed("lsjson", &target, status, err));
        }
        parsed.map_err(|e| StorageError::Rclone {
            op: "lsjson",
            target,
            code: None,
            message: format!("unreadable listing: {e}"),
        })
    }

    /// [`Rclone::list_each`] in byte order of the path, by an external
    /// merge sort whose runs spill into `spill_dir` (created, and removed
    /// before returning). Duplicate paths are delivered once. `observe`
    /// sees every entry as it is read, all of them before `sink` gets the
    /// first (a caller takes a census of the whole listing there).
    pub fn list_sorted(
        &self,
        loc: &RcloneLocation,
        hash: Option<&str>,
        spill_dir: &Path,
        observe: &mut dyn FnMut(&RcloneEntry),
        sink: &mut dyn FnMut(RcloneEntry),
    ) -> Result<u64, StorageError> {
        let mut sorter = ExternalSort::new(spill_dir, RUN_ENTRIES);
        let mut spill_err = None;
        let listed = self.list_each(loc, hash, &mut |e| {
            observe(&e);
            if spill_err.is_none() {
                spill_err = sorter.push(e).err();
            }
        });
        let out = match (listed, spill_err) {
            (Err(e), _) => Err(e),
            (Ok(_), Some(e)) => Err(e),
            (Ok(_), None) => sorter.finish(sink),
        };
        let _ = std::fs::remove_dir_all(spill_dir);
        out
    }

    /// Whether the file `rel` below `loc` exists (`lsjson --stat`).
    pub fn exists(&self, loc: &RcloneLocation, rel: &str) -> Result<bool, StorageError> {
        let target = loc.target(rel);
        let (mut child, err) = self.spawn(self.command(&["lsjson", "--stat", "--no-mimetype", &target]))?;
        let _ = child.stdout.take().map(|mut o| io::copy(&mut o, &mut io::sink()));
        let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
        match Self::failed_or_ok("lsjson", &target, status, err) {
            Ok(()) => Ok(true),
            Err(e) if e.is_not_found() => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn failed_or_ok(op: &'static str, target: &str, status: ExitStatus, err: Stderr) -> Result<(), StorageError> {
        if status.success() {
            Ok(())
        } else {
            Err(Self::failed(op, target, status, err))
        }
    }

    /// Stream the bytes of `REMOTE:path` (rclone's name, see
    /// [`RcloneLocation::target`]) into `out`, hashing them.
    pub fn cat_to_writer(&self, target: &str, out: &mut dyn Write) -> Result<Downloaded, StorageError> {
        let (mut child, err) = self.spawn(self.command(&["cat", target]))?;
        let mut stdout = child.stdout.take().expect("piped stdout");
        let copied = copy_hashing(&mut stdout, out);
        drop(stdout);
        let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
        Self::failed_or_ok("cat", target, status, err)?;
        let (size, blake3_hex, sha256_hex) = copied.map_err(|e| StorageError::io(format!("copy {target}"), e))?;
        Ok(Downloaded { size, blake3_hex, sha256_hex, resumes: 0 })
    }

    /// [`Rclone::cat_to_writer`] into the file `dest` (written beside it
    /// first, renamed into place only when complete).
    pub fn download_to(&self, target: &str, dest: &Path) -> Result<Downloaded, StorageError> {
        let part = dest.with_extension(format!("{}.part", std::process::id()));
        let mut f =
            std::fs::File::create(&part).map_err(|e| StorageError::io(format!("create {}", part.display()), e))?;
        let got = self.cat_to_writer(target, &mut f);
        drop(f);
        match got {
            Ok(d) => {
                std::fs::rename(&part, dest).map_err(|e| StorageError::io(format!("rename {}", dest.display()), e))?;
                Ok(d)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                Err(e)
            }
        }
    }

    /// Download many files of `loc` in one rclone process: `rclone copy
    /// --files-from-raw` with [`RcloneOptions::transfers`] parallel
    /// transfers into `staging` (created; paths kept relative). Returns the
    /// paths that arrived; a file that failed, or a path rclone cannot take
    /// from a list (a line break in its name), is simply absent, and the
    /// caller fetches it alone (`cat`) for a per-file error. An error here
    /// means rclone itself could not run.
    pub fn copy_listed(
        &self,
        loc: &RcloneLocation,
        rels: &[&str],
        staging: &Path,
    ) -> Result<Vec<String>, StorageError> {
        let listable: Vec<&str> = rels.iter().copied().filter(|r| !r.contains(['\n', '\r'])).collect();
        if listable.is_empty() {
            return Ok(Vec::new());
        }
        std::fs::create_dir_all(staging).map_err(|e| StorageError::io(format!("create {}", staging.display()), e))?;
        let list = staging.with_extension("list");
        std::fs::write(&list, listable.join("\n") + "\n")
            .map_err(|e| StorageError::io(format!("write {}", list.display()), e))?;
        let (src, transfers) = (loc.target(""), self.opts.transfers.max(1).to_string());
        let list_arg = list.to_string_lossy().into_owned();
        let dest = staging.to_string_lossy().into_owned();
        let args = [
            "copy",
            "--files-from-raw",
            &list_arg,
            "--no-check-dest",
            "--transfers",
            &transfers,
            "--checkers",
            &transfers,
            "--retries",
            "1",
            "--low-level-retries",
            "2",
            &src,
            &dest,
        ];
        let ran = self.spawn(self.command(&args)).and_then(|(mut child, err)| {
            let _ = child.stdout.take().map(|mut o| io::copy(&mut o, &mut io::sink()));
            let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
            Ok((status, err))
        });
        let _ = std::fs::remove_file(&list);
        let (status, err) = ran?;
        if !status.success() {
            // Partial success is normal (one file gone since the listing);
            // what arrived is used, the rest is fetched one by one.
            let _ = err.message();
        }
        Ok(listable.into_iter().filter(|r| staging.join(r).is_file()).map(str::to_string).collect())
    }

    /// One folder level: sub-folder names and the number of files directly
    /// in `rel_dir` (empty or ending in `/`) below `loc`.
    pub fn list_folder(&self, loc: &RcloneLocation, rel_dir: &str) -> Result<(Vec<String>, usize), StorageError> {
        let target = loc.target(rel_dir);
        let (mut child, err) = self.spawn(self.command(&["lsjson", "--no-mimetype", "--no-modtime", &target]))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let (mut dirs, mut files) = (Vec::new(), 0usize);
        let parsed = stream_raw(BufReader::new(stdout), &mut |e: LsJson| {
            if e.is_dir {
                dirs.push(e.path);
            } else {
                files += 1;
            }
        });
        let status = child.wait().map_err(|e| StorageError::io("wait for rclone", e))?;
        Self::failed_or_ok("lsjson", &target, status, err)?;
        parsed.map_err(|e| StorageError::Rclone { op: "lsjson", target, code: None, message: e.to_string() })?;
        Ok((dirs, files))
    }
}

/// Parse a JSON array of listing entries element by element.
fn stream_array(r: impl Read, sink: &mut dyn FnMut(RcloneEntry)) -> Result<u64, serde_json::Error> {
    let mut n = 0u64;
    stream_raw(r, &mut |e: LsJson| {
        if !e.is_dir {
            n += 1;
            sink(e.entry());
        }
    })?;
    Ok(n)
}

fn stream_raw(r: impl Read, sink: &mut dyn FnMut(LsJson)) -> Result<(), serde_json::Error> {
    struct Each<'a>(&'a mut dyn FnMut(LsJson));
    impl<'de> Visitor<'de> for Each<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON array of rclone listing entries")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
            while let Some(e) = seq.next_element::<LsJson>()? {
                (self.0)(e);
            }
            Ok(())
        }
    }
    let mut de = serde_json::Deserializer::from_reader(r);
    de.deserialize_seq(Each(sink))?;
    de.end()
}

/// Copy `r` into `w`, returning the size and the blake3 and sha256 (hex).
fn copy_hashing(r: &mut dyn Read, w: &mut dyn Write) -> io::Result<(u64, String, String)> {
    let (mut b3, mut sha) = (blake3::Hasher::new(), Sha256::new());
    let mut buf = vec![0u8; 256 * 1024];
    let mut size = 0u64;
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        w.write_all(&buf[..n])?;
        b3.update(&buf[..n]);
        sha.update(&buf[..n]);
        size += n as u64;
    }
    w.flush()?;
    Ok((size, b3.finalize().to_hex().to_string(), hex::encode(sha.finalize())))
}

/// External merge sort of listing entries by the bytes of their path:
/// sorted runs of at most `run` entries spill to JSON-lines files, then a
/// k-way merge streams them back.
struct ExternalSort {
    dir: PathBuf,
    run: usize,
    buf: Vec<RcloneEntry>,
    runs: Vec<PathBuf>,
}

impl ExternalSort {
    fn new(dir: &Path, run: usize) -> Self {
        ExternalSort { dir: dir.to_path_buf(), run: run.max(1), buf: Vec::new(), runs: Vec::new() }
    }

    fn push(&mut self, e: RcloneEntry) -> Result<(), StorageError> {
        self.buf.push(e);
        if self.buf.len() >= self.run {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> Result<(), StorageError> {
        let io_err = |e| StorageError::io(format!("spill listing into {}", self.dir.display()), e);
        std::fs::create_dir_all(&self.dir).map_err(io_err)?;
        self.buf.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let path = self.dir.join(format!("run-{:06}.jsonl", self.runs.len()));
        let mut w = BufWriter::new(std::fs::File::create(&path).map_err(io_err)?);
        for e in self.buf.drain(..) {
            serde_json::to_writer(&mut w, &e).map_err(|e| io_err(e.into()))?;
            w.write_all(b"\n").map_err(io_err)?;
        }
        w.flush().map_err(io_err)?;
        self.runs.push(path);
        Ok(())
    }

    fn finish(mut self, sink: &mut dyn FnMut(RcloneEntry)) -> Result<u64, StorageError> {
        let mut n = 0u64;
        let mut last: Option<String> = None;
        let mut emit = |e: RcloneEntry| {
            if last.as_deref() != Some(e.path.as_str()) {
                last = Some(e.path.clone());
                n += 1;
                sink(e);
            }
        };
        if self.runs.is_empty() {
            self.buf.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
            self.buf.drain(..).for_each(&mut emit);
            return Ok(n);
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        let io_err = |e: io::Error| StorageError::io("read back the spilled listing", e);
        let mut readers = Vec::with_capacity(self.runs.len());
        for p in &self.runs {
            readers.push(BufReader::new(std::fs::File::open(p).map_err(io_err)?).lines());
        }
        let next = |r: &mut std::io::Lines<BufReader<std::fs::File>>| -> Result<Option<RcloneEntry>, StorageError> {
            match r.next() {
                None => Ok(None),
                Some(line) => {
                    let line = line.map_err(io_err)?;
                    serde_json::from_str(&line).map(Some).map_err(|e| io_err(e.into()))
                }
            }
        };
        let mut heap = BinaryHeap::new();
        let mut held: Vec<Option<RcloneEntry>> = Vec::with_capacity(readers.len());
        for (i, r) in readers.iter_mut().enumerate() {
            let e = next(r)?;
            if let Some(e) = &e {
                heap.push(Reverse((e.path.as_bytes().to_vec(), i)));
            }
            held.push(e);
        }
        while let Some(Reverse((_, i))) = heap.pop() {
            let e = held[i].take().expect("held entry");
            if let Some(nx) = next(&mut readers[i])? {
                heap.push(Reverse((nx.path.as_bytes().to_vec(), i)));
                held[i] = Some(nx);
            }
            emit(e);
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_locations_and_refuses_connection_strings() {
        let l = RcloneLocation::parse("rclone:gdrive:Company/Docs").unwrap();
        assert_eq!((l.remote.as_str(), l.path.as_str()), ("gdrive", "Company/Docs/"));
        assert_eq!(l.target("a b.md"), "gdrive:Company/Docs/a b.md");
        assert_eq!(l.uri(), "rclone://gdrive/Company/Docs/");
        assert_eq!(l.object_uri("a b#1.md"), "rclone://gdrive/Company/Docs/a%20b%231.md");
        assert_eq!(RcloneLocation::parse(&l.object_uri("x/")).unwrap().path, "Company/Docs/x/");
        let root = RcloneLocation::parse("rclone:share:").unwrap();
        assert_eq!((root.path.as_str(), root.target("f")), ("", "share:f".to_string()));
        let abs = RcloneLocation::parse("rclone:sftp:/srv/docs").unwrap();
        assert_eq!(abs.target("x"), "sftp:/srv/docs/x");
        assert_eq!(RcloneLocation::parse(&abs.uri()).unwrap(), abs);
        for bad in [
            "rclone::webdav,url=http://u:p@h:",
            "rclone:gdrive",
            "rclone::x",
            "rclone:-x:y",
            "rclone:g/d:y",
            "rclone:g:a/../b",
            "rclone:g:a\nb",
            "s3://b/k",
        ] {
            assert!(RcloneLocation::parse(bad).is_err(), "{bad}");
        }
        let e = RcloneLocation::parse("rclone::webdav,pass=secret:").unwrap_err().to_string();
        assert!(e.contains("connection-string") && e.contains("name a remote"), "{e}");
    }

    #[test]
    fn stored_hashes_only_where_listing_reads_no_file() {
        assert_eq!(stored_hash_for("drive"), Some("md5"));
        assert_eq!(stored_hash_for("onedrive"), Some("quickxor"));
        for computed in ["local", "sftp", "smb", "webdav", "ftp", "crypt"] {
            assert_eq!(stored_hash_for(computed), None, "{computed}");
        }
    }

    #[test]
    fn listing_entries_stream_with_change_tokens() {
        let json = r#"[
{"Path":"b/x.md","Name":"x.md","Size":3,"ModTime":"2026-12-03T06:54:19.833913184Z","IsDir":false,"Hashes":{"md5":"abc"}},
{"Path":"b","Name":"b","Size":-1,"ModTime":"2026-12-03T06:54:19Z","IsDir":true},
{"Path":"Doc.docx","Name":"Doc.docx","Size":-1,"ModTime":"2026-01-01T00:00:00+01:00","IsDir":false,"ID":"1AbC"},
{"Path":"plain.txt","Size":5,"ModTime":"bogus","IsDir":false}
]"#;
        let mut got = vec![];
        let n = stream_array(json.as_bytes(), &mut |e| got.push(e)).unwrap();
        assert_eq!(n, 3);
        assert_eq!(got[0].etag, "md5:abc");
        assert_eq!(got[0].mtime_ms, 1_796_280_859_833);
        assert_eq!((got[1].size, got[1].etag.as_str()), (0, "id:1AbC"));
        assert_eq!(got[1].mtime_ms, 1_767_222_000_000);
        assert_eq!((got[2].mtime_ms, got[2].etag.as_str()), (0, ""));
        assert!(stream_array(&b"[{\"Path\":1}]"[..], &mut |_| {}).is_err());
        assert!(stream_array(&b"[{\"Path\":\"a\"}"[..], &mut |_| {}).is_err(), "truncated");
    }

    #[test]
    fn external_sort_spills_and_merges_in_byte_order() {
        let d = tempfile::tempdir().unwrap();
        let names = ["b", "a/x", "a-c", "a", "Z", "é", "a/x", "a.b", "c/d/e"];
        for run in [1usize, 2, 3, 100] {
            let mut s = ExternalSort::new(&d.path().join(format!("r{run}")), run);
            for n in names {
                s.push(RcloneEntry { path: n.into(), size: 1, mtime_ms: 0, etag: String::new() }).unwrap();
            }
            let mut got = vec![];
            let n = s.finish(&mut |e| got.push(e.path)).unwrap();
            let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
            want.sort();
            want.dedup();
            assert_eq!(got, want, "run {run}");
            assert_eq!(n as usize, want.len());
        }
    }

    #[test]
    fn copy_hashing_matches_the_known_digests() {
        let mut out = Vec::new();
        let (n, b3, sha) = copy_hashing(&mut &b"hi\n"[..], &mut out).unwrap();
        assert_eq!((n, out.as_slice()), (3, &b"hi\n"[..]));
        assert_eq!(sha, "98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4");
        assert_eq!(b3, blake3::hash(b"hi\n").to_hex().to_string());
    }

    #[test]
    fn a_missing_binary_is_one_clear_error() {
        let r =
            Rclone::new(RcloneOptions { bin: "/nonexistent/rclone".into(), config: None, hash: None, transfers: 8 });
        let loc = RcloneLocation::parse("rclone:x:y").unwrap();
        let e = r.list_each(&loc, None, &mut |_| {}).unwrap_err();
        assert!(matches!(e, StorageError::RcloneMissing { .. }), "{e}");
        assert!(e.to_string().contains("/nonexistent/rclone"), "{e}");
    }
}
