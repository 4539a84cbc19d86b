//! An object-store listing turned into the walk's [`Listed`] stream, page
//! by page: keys validated ([`unsafe_key_reason`]), the walk's ignore rules
//! applied, directory markers dropped, nested forests pruned.
//!
//! In: raw objects in the server's key order (ListObjectsV2 answers in
//! UTF-8 byte order), one at a time. Out: [`Listed`] files in path order to
//! a sink, and the per-key problems. Memory: the objects whose fate is not
//! known yet, at most [`HOLD_MAX`]; never the whole listing.
//!
//! Nested forests: a folder holding `_index.md` is a forest, never a
//! source, and everything under it is dropped. A key can only be let
//! through once every folder above it is known not to hold `_index.md`,
//! and in byte order `D/_index.md` comes after `D/Report.pdf` (`_` sorts
//! after capitals and digits), so such keys wait until the listing passes
//! `D/_index.md`. When more than [`HOLD_MAX`] keys wait, the folders the
//! oldest one waits on are asked directly (`probe`: one HEAD each), which
//! bounds memory on drives of capitalised names at a few requests.

use std::collections::{HashSet, VecDeque};
use std::path::{Path, PathBuf};

use super::{unsafe_key_reason, Ignore, Listed, Listing, ObjectRef, RawObject, WalkProblem};
use crate::outcomes::StatKey;

/// Most keys held back waiting for a nested-forest decision.
pub const HOLD_MAX: usize = 20_000;

/// The name whose presence makes a folder a forest.
const MARK: &str = "_index.md";

/// Answers "does folder `dir` (source-relative, `""` or ending in `/`)
/// hold `_index.md`?" directly (a HEAD request for S3).
pub type Probe<'a> = dyn FnMut(&str) -> Result<bool, ProbeError> + 'a;

/// Why a probe could not tell: where it asked, and the backend's error.
#[derive(Debug, thiserror::Error)]
#[error("{at}")]
pub struct ProbeError {
    /// What was asked (an object key, a folder).
    pub at: String,
    /// The backend's answer.
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

/// The streaming filter (see the module doc).
pub struct ObjectStream {
    prefix: Vec<u8>,
    ignore: Ignore,
    slot_dir: PathBuf,
    hold_max: usize,
    /// Kept keys not yet decided, in key order.
    held: VecDeque<(String, RawObject)>,
    /// Folders known to hold `_index.md` (listed or probed).
    forests: HashSet<String>,
    /// Folders a probe said hold none.
    probed_clear: HashSet<String>,
    /// The last source-relative key pushed (kept or not).
    last: Option<String>,
    problems: Vec<WalkProblem>,
    error: Option<String>,
}

/// `a + b` compared with `c`, without building `a + b`.
fn cmp_concat(a: &str, b: &str, c: &str) -> std::cmp::Ordering {
    let ab = a.as_bytes().iter().chain(b.as_bytes());
    ab.cmp(c.as_bytes().iter())
}

/// The folders above `rel`: `""`, `a/`, `a/b/` for `a/b/c.md`.
fn folders(rel: &str) -> impl Iterator<Item = &str> {
    std::iter::once("").chain(rel.match_indices('/').map(move |(i, _)| &rel[..=i]))
}

impl ObjectStream {
    /// A stream for objects under `prefix`, downloaded into `slot_dir`.
    pub fn new(prefix: &str, extra_ignore: &[String], slot_dir: &Path) -> ObjectStream {
        ObjectStream {
            prefix: prefix.as_bytes().to_vec(),
            ignore: Ignore::new(extra_ignore),
            slot_dir: slot_dir.to_path_buf(),
            hold_max: HOLD_MAX,
            held: VecDeque::new(),
            forests: HashSet::new(),
            probed_clear: HashSet::new(),
            last: None,
            problems: Vec::new(),
            error: None,
        }
    }

    /// Take the next object of the listing; files that are decided go to
    /// `sink` in order.
    pub fn push(&mut self, o: RawObject, probe: &mut Probe<'_>, sink: &mut dyn FnMut(Listed)) {
        let key = Some(StatKey { size: o.size, mtime_ms: o.mtime_ms, etag: Some(o.etag.clone()) });
        let Some(rel_bytes) = o.key.strip_prefix(self.prefix.as_slice()) else {
            return;
        };
        let rel = match std::str::from_utf8(rel_bytes) {
            Ok(r) => r.to_string(),
            Err(_) => {
                let shown = String::from_utf8_lossy(rel_bytes).into_owned();
                self.problems.push(WalkProblem::skipped(shown, "object key is not valid UTF-8: skipped", key));
                return;
            }
        };
        if self.last.as_deref().is_some_and(|l| rel.as_str() <= l) {
            // The join downstream needs byte order; a server that breaks it
            // cannot be trusted to have listed everything either.
            self.error.get_or_insert_with(|| format!("object listing out of key order at {rel:?}"));
            return;
        }
        self.last = Some(rel.clone());
        if rel.is_empty() || rel.ends_with('/') {
            self.release(probe, sink);
            return; // directory markers
        }
        if let Some(why) = unsafe_key_reason(&rel) {
            self.problems.push(WalkProblem::skipped(rel, why, key));
            self.release(probe, sink);
            return;
        }
        if rel.split('/').any(Ignore::component_ignored) || self.ignore.matches(&rel) {
            self.release(probe, sink);
            return;
        }
        if let Some(dir) = rel.strip_suffix(MARK).filter(|d| d.is_empty() || d.ends_with('/')) {
            self.forests.insert(dir.to_string());
        }
        self.held.push_back((rel, o));
        self.release(probe, sink);
    }

    /// The end of the listing: every held key is decided now.
    pub fn finish(mut self, sink: &mut dyn FnMut(Listed)) -> Listing {
        self.last = None;
        while let Some((rel, o)) = self.held.pop_front() {
            if !self.in_forest(&rel) {
                sink(self.listed(rel, o));
            }
        }
        Listing { files: Vec::new(), problems: self.problems, listing_error: self.error }
    }

    fn in_forest(&self, rel: &str) -> bool {
        folders(rel).any(|d| self.forests.contains(d))
    }

    /// Whether `dir`'s `_index.md` is known: listed past it, or probed.
    fn known(&self, dir: &str) -> bool {
        self.forests.contains(dir)
            || self.probed_clear.contains(dir)
            || self.last.as_deref().is_some_and(|l| cmp_concat(dir, MARK, l).is_le())
    }

    /// Let through (or drop) the held keys from the oldest on, while
    /// decided; when too many wait, probe what the oldest waits on.
    fn release(&mut self, probe: &mut Probe<'_>, sink: &mut dyn FnMut(Listed)) {
        while let Some((rel, _)) = self.held.front() {
            let waiting: Vec<String> = folders(rel).filter(|d| !self.known(d)).map(str::to_string).collect();
            if !waiting.is_empty() {
                if self.held.len() <= self.hold_max {
                    return;
                }
                for d in waiting {
                    match probe(&d) {
                        Ok(true) => {
                            self.forests.insert(d);
                        }
                        Ok(false) => {
                            self.probed_clear.insert(d);
                        }
                        Err(e) => {
                            // Unknowable: hold it to the end of the listing
                            // (decided then), but the run must not trust
                            // the listing for staleness.
                            self.error.get_or_insert_with(|| crate::error::chain(&e));
                            self.hold_max = usize::MAX;
                            return;
                        }
                    }
                }
            }
            let Some((rel, o)) = self.held.pop_front() else { break };
            if !self.in_forest(&rel) {
                sink(self.listed(rel, o));
            }
        }
    }

    fn listed(&self, rel: String, o: RawObject) -> Listed {
        let key = String::from_utf8_lossy(&o.key).into_owned();
        // The slot keeps the extension: converters are chosen by it.
        let slot = blake3::hash(rel.as_bytes()).to_hex();
        let file = rel.rsplit('/').next().unwrap_or(&rel);
        let ext = match file.rfind('.') {
            Some(i) if i > 0 && file[i + 1..].chars().all(|c| c.is_ascii_alphanumeric()) => &file[i..],
            _ => "",
        };
        // The slot is a folder named by the path's hash holding the file
        // under its own stem: converters that fall back to the file name
        // for a title or a table name (CSV, media, untitled documents) see
        // the source's name, not the hash.
        let stem = &file[..file.len() - ext.len()];
        let mut cut = stem.len().min(120);
        while !stem.is_char_boundary(cut) {
            cut -= 1;
        }
        let stem = match stem[..cut].trim_matches('.') {
            "" => "file",
            s => s,
        };
        Listed {
            abs: self.slot_dir.join(&slot.as_str()[..32]).join(format!("{stem}{}", ext.to_ascii_lowercase())),
            rel,
            size: o.size,
            mtime_ms: o.mtime_ms,
            object: Some(ObjectRef { key, etag: o.etag }),
        }
    }
}

/// Listing of an S3 source from raw objects in any order (pure): sorted by
/// key, then filtered as [`ObjectStream`] does. Each object's `abs` is its
/// download slot under `slot_dir`.
pub fn listing_from_objects(
    prefix: &str,
    mut objects: Vec<RawObject>,
    extra_ignore: &[String],
    slot_dir: &Path,
) -> Listing {
    objects.sort_by(|a, b| a.key.cmp(&b.key));
    objects.dedup_by(|a, b| a.key == b.key);
    let mut stream = ObjectStream::new(prefix, extra_ignore, slot_dir);
    let mut files = Vec::new();
    let mut no_probe =
        |d: &str| -> Result<bool, ProbeError> { Err(ProbeError { at: d.to_string(), source: "no probe".into() }) };
    stream.hold_max = usize::MAX;
    for o in objects {
        stream.push(o, &mut no_probe, &mut |f| files.push(f));
    }
    let mut listing = stream.finish(&mut |f| files.push(f));
    listing.files = files;
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(k: &[u8]) -> RawObject {
        RawObject { key: k.to_vec(), size: 3, etag: "e".into(), mtime_ms: 1 }
    }

    #[test]
    fn untrusted_keys() {
        let objs = vec![
            obj(b"p/ok/a.md"),
            obj(b"p/../../etc/passwd"),
            obj(b"p//abs.md"),
            obj(b"p/a/./b.md"),
            obj(b"p/bad\xff.md"),
            obj(b"p/ctl\x01.md"),
            obj(b"p/dir/"),
            obj(b"p/.hidden/x.md"),
            obj(b"p/x.tmp"),
            obj(b"p/nested/_index.md"),
            obj(b"p/nested/deep/n.md"),
            obj(b"other/z.md"),
        ];
        let l = listing_from_objects("p/", objs, &[], Path::new("/slots"));
        let rels: Vec<&str> = l.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, vec!["ok/a.md"]);
        assert!(l.files[0].abs.starts_with("/slots"));
        assert_eq!(l.files[0].object.as_ref().map(|o| o.key.as_str()), Some("p/ok/a.md"));
        let msgs: Vec<&str> = l.problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(msgs.len(), 5, "{:?}", l.problems);
        assert!(msgs.iter().any(|m| m.contains("not valid UTF-8")));
        assert!(msgs.iter().any(|m| m.contains("absolute") || m.contains("empty")));
        assert!(l.problems.iter().any(|p| p.rel == "../../etc/passwd" && p.message.contains("never a path escape")));
        assert!(l.problems.iter().all(|p| p.key.as_ref().is_some_and(|k| k.etag.is_some())));
        assert!(l.listing_error.is_none());
    }

    /// Keys of a drive with capitalised names: `Docs/_index.md` comes after
    /// `Docs/A.md` in byte order, so `Docs/A.md` must wait for it.
    fn drive() -> Vec<RawObject> {
        let mut keys: Vec<String> = vec![];
        for d in ["Alpha", "Docs", "Zed"] {
            for i in 0..30 {
                keys.push(format!("{d}/F{i:02}.md"));
            }
            keys.push(format!("{d}/lower.md"));
        }
        keys.push("Docs/_index.md".into());
        keys.push("Docs/Sub/x.md".into());
        keys.push("README.md".into());
        keys.sort();
        keys.iter().map(|k| obj(k.as_bytes())).collect()
    }

    #[test]
    fn a_stream_holding_little_equals_the_whole_listing() {
        let whole = listing_from_objects("", drive(), &[], Path::new("/s"));
        let want: Vec<String> = whole.files.iter().map(|f| f.rel.clone()).collect();
        assert_eq!(want.len(), 30 + 1 + 30 + 1 + 1, "Docs/ is a forest: pruned");
        assert!(want.iter().all(|r| !r.starts_with("Docs/")));
        for hold in [0usize, 1, 5, 1000] {
            let mut s = ObjectStream::new("", &[], Path::new("/s"));
            s.hold_max = hold;
            let (mut got, mut probes, mut most_held) = (vec![], 0usize, 0usize);
            let mut probe = |d: &str| -> Result<bool, ProbeError> {
                probes += 1;
                Ok(d == "Docs/")
            };
            for o in drive() {
                s.push(o, &mut probe, &mut |f| got.push(f.rel));
                most_held = most_held.max(s.held.len());
            }
            let end = s.finish(&mut |f| got.push(f.rel));
            assert_eq!(got, want, "hold {hold}");
            assert!(end.listing_error.is_none());
            assert!(most_held <= hold.max(1) + 1, "hold {hold}: held {most_held}");
            if hold >= 1000 {
                assert_eq!(probes, 0, "nothing needed a probe");
            }
        }
    }

    #[test]
    fn a_failed_probe_or_a_disordered_listing_is_a_listing_error() {
        let mut s = ObjectStream::new("", &[], Path::new("/s"));
        s.hold_max = 0;
        let mut got = vec![];
        let mut probe = |d: &str| -> Result<bool, ProbeError> {
            Err(ProbeError { at: format!("{d}_index.md"), source: "HEAD failed".into() })
        };
        for o in drive() {
            s.push(o, &mut probe, &mut |f| got.push(f.rel));
        }
        let end = s.finish(&mut |f| got.push(f.rel));
        assert_eq!(end.listing_error.as_deref(), Some("_index.md: HEAD failed"));
        assert_eq!(got.len(), 63, "the keys still arrive, decided at the end");

        let mut s = ObjectStream::new("", &[], Path::new("/s"));
        let mut none = |_: &str| -> Result<bool, ProbeError> { Ok(false) };
        s.push(obj(b"b.md"), &mut none, &mut |_| {});
        s.push(obj(b"a.md"), &mut none, &mut |_| {});
        let end = s.finish(&mut |_| {});
        assert!(end.listing_error.is_some_and(|e| e.contains("out of key order")));
    }
}
