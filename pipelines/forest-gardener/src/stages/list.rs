//! List stage: walk a local folder or list an S3 prefix, apply ignore
//! rules and a targeted sync's PATH, and stream the files in path order
//! (byte order of the source-relative path, the order the manifest is read
//! in) to the reconcile stage.
//!
//! In: the source config and an optional PATH. Out: [`Listed`] files, one
//! at a time, then a [`Listing`] holding only the per-path problems and the
//! listing error. Touches the source (metadata only); never the forest.

use crate::env::{check_containment, RunEnv};
use crate::error::GardenError;
use crate::gitsrc::listing::list_tree;
use crate::gitsrc::GitSource;
use crate::source::Access;
use crate::walk::{walk_source, walk_source_each, FolderCensus, Listed, Listing, ObjectStream, ProbeError, RawObject};
use forest_storage::{Rclone, RcloneEntry, RcloneLocation, S3Client, S3Location};
use std::cell::RefCell;
use std::sync::{Arc, OnceLock};

/// Where a run's listing comes from, decided before the stream starts.
pub(crate) enum ListSource {
    /// Walk this local root (following directory symlinks when set) while
    /// the join consumes it.
    Walk(std::path::PathBuf, bool),
    /// List this S3 prefix page by page while the join consumes it
    /// (objects download into `slots`).
    Objects {
        /// Bucket and prefix.
        loc: S3Location,
        /// The source's client.
        client: Arc<S3Client>,
        /// Download slots of the listed objects.
        slots: std::path::PathBuf,
    },
    /// List this rclone location (sorted by an external merge sort) while
    /// the join consumes it (files download into `slots`).
    Rclone {
        /// Remote and path.
        loc: RcloneLocation,
        /// The runner.
        rclone: Arc<Rclone>,
        /// Download slots of the listed files.
        slots: std::path::PathBuf,
        /// Where the listing's folder census is published.
        census: Arc<OnceLock<FolderCensus>>,
    },
    /// Walk this git tree whole (blob OIDs as ETags; blobs read into `slots`).
    GitTree {
        /// The opened source.
        git: Arc<GitSource>,
        /// Where blobs are written for conversion.
        slots: std::path::PathBuf,
    },
    /// The changed files of a git source since its recorded commit,
    /// computed before the join (proportional to the changes).
    GitDelta(Vec<Listed>, Vec<crate::walk::WalkProblem>),
    /// The source cannot be listed at all.
    Failed(String),
}

/// Check the PATH and the source, and say where the listing comes from.
pub(crate) fn open_listing(env: &RunEnv, path: Option<&str>) -> Result<(ListSource, Option<String>), GardenError> {
    if let Access::Local { root, .. } = &env.access {
        if let Ok(canon) = std::fs::canonicalize(root) {
            check_containment(env.forest, &canon)?;
        }
    }
    let only = match path {
        Some(p) => {
            let p = p.trim_start_matches("./");
            if p.starts_with('/') || p.split('/').any(|c| c == "..") {
                return Err(GardenError::Schema("sync path leaves the source root".into()));
            }
            Some(p.to_string())
        }
        None => None,
    };
    let source = match &env.access {
        Access::Local { root, follow_symlinks } => match std::fs::read_dir(root) {
            Ok(_) => ListSource::Walk(root.clone(), *follow_symlinks),
            Err(e) => ListSource::Failed(format!("{}: {e}", root.display())),
        },
        Access::S3 { loc, client, slots } => {
            ListSource::Objects { loc: loc.clone(), client: Arc::clone(client), slots: slots.clone() }
        }
        Access::Rclone { loc, rclone, slots, census } => ListSource::Rclone {
            loc: loc.clone(),
            rclone: Arc::clone(rclone),
            slots: slots.clone(),
            census: Arc::clone(census),
        },
        Access::Git { git: Ok(git), slots } => ListSource::GitTree { git: Arc::clone(git), slots: slots.clone() },
        Access::Git { git: Err(e), .. } => ListSource::Failed(crate::error::chain(&**e)),
    };
    Ok((source, only))
}

/// The whole listing of a source in memory (the list stage's streams,
/// collected).
impl Access {
    /// List the source. A listing error never yields a partial listing that
    /// could mark files stale: it is reported in `listing_error`.
    pub fn list(&self, ignore: &[String]) -> Listing {
        match self {
            Access::Local { root, follow_symlinks } => walk_source(root, ignore, *follow_symlinks),
            Access::S3 { loc, client, slots } => {
                let mut files = Vec::new();
                let mut listing = list_objects(loc, client, slots, ignore, &mut |f| files.push(f));
                listing.files = files;
                listing
            }
            Access::Rclone { loc, rclone, slots, census } => {
                let mut files = Vec::new();
                let mut listing = list_rclone(loc, rclone, slots, census, ignore, &mut |f| files.push(f));
                listing.files = files;
                listing
            }
            Access::Git { git: Ok(git), slots } => {
                let mut files = Vec::new();
                let mut listing = list_tree(git, slots, ignore, &mut |f| files.push(f));
                listing.files = files;
                listing
            }
            Access::Git { git: Err(e), .. } => {
                Listing { listing_error: Some(crate::error::chain(&**e)), ..Default::default() }
            }
        }
    }
}

/// Stream `source` into `sink` in path order (only `only` for a targeted
/// sync). Returns the problems and listing error (files left empty).
pub(crate) fn list_each(
    source: ListSource,
    ignore: &[String],
    only: Option<&str>,
    sink: &mut dyn FnMut(Listed),
) -> Listing {
    let mut filtered = |f: Listed| {
        if only.is_none_or(|p| f.rel == p) {
            sink(f)
        }
    };
    let mut end = match source {
        ListSource::Walk(root, follow) => walk_source_each(&root, ignore, follow, &mut filtered),
        ListSource::Objects { loc, client, slots } => list_objects(&loc, &client, &slots, ignore, &mut filtered),
        ListSource::Rclone { loc, rclone, slots, census } => {
            list_rclone(&loc, &rclone, &slots, &census, ignore, &mut filtered)
        }
        ListSource::GitTree { git, slots } => list_tree(&git, &slots, ignore, &mut filtered),
        ListSource::GitDelta(files, problems) => {
            files.into_iter().for_each(&mut filtered);
            Listing { problems, ..Default::default() }
        }
        ListSource::Failed(e) => Listing { listing_error: Some(e), ..Default::default() },
    };
    if let Some(p) = only {
        end.problems.retain(|q| q.rel == p);
    }
    end
}

/// Stream an S3 listing through [`ObjectStream`]: pages as they arrive,
/// a HEAD per folder only when too many keys wait on a nested-forest
/// decision. A failed page or probe sets the listing error (the files
/// already delivered stay, but nothing is marked stale).
pub(crate) fn list_objects(
    loc: &S3Location,
    client: &S3Client,
    slots: &std::path::Path,
    ignore: &[String],
    sink: &mut dyn FnMut(Listed),
) -> Listing {
    let mut stream = ObjectStream::new(&loc.prefix, ignore, slots);
    let mut probe = |dir: &str| -> Result<bool, ProbeError> {
        let key = format!("{}{dir}_index.md", loc.prefix);
        client
            .exists(&loc.bucket, &key)
            .map_err(|e| ProbeError { at: format!("s3://{}/{key}", loc.bucket), source: Box::new(e) })
    };
    let listed = client.list_each(loc, &mut |o| {
        let raw = RawObject { key: o.raw_key, size: o.size, etag: o.etag, mtime_ms: o.last_modified_ms };
        stream.push(raw, &mut probe, sink);
    });
    let mut end = stream.finish(sink);
    if let Err(e) = listed {
        end.listing_error = Some(format!("s3://{}/{}: {}", loc.bucket, loc.prefix, crate::error::chain(&e)));
    }
    end
}

/// Stream an rclone listing through [`ObjectStream`]: `rclone lsjson
/// --recursive` put into byte order by an external sort that spills beside
/// the download slots; the change token is the backend's stored hash (by
/// type, never one rclone computes by reading) or its object ID. Any
/// failure (no binary, unknown remote, expired token, a directory that
/// failed) is the listing error: nothing is marked stale.
///
/// While the unsorted listing is read, a [`FolderCensus`] counts every
/// folder; it is published in `census` before the first sorted file goes
/// out, so the nested-forest probe and the planner's sub-folder census ask
/// it instead of starting one `rclone lsjson` per folder.
pub(crate) fn list_rclone(
    loc: &RcloneLocation,
    rclone: &Rclone,
    slots: &std::path::Path,
    census: &OnceLock<FolderCensus>,
    ignore: &[String],
    sink: &mut dyn FnMut(Listed),
) -> Listing {
    let hash = match rclone.hash_type(loc) {
        Ok(h) => h,
        Err(e) => return Listing { listing_error: Some(crate::error::chain(&e)), ..Default::default() },
    };
    let mut stream = ObjectStream::new("", ignore, slots);
    let mut probe = |dir: &str| -> Result<bool, ProbeError> {
        match census.get() {
            Some(c) => Ok(c.is_nested(dir)),
            None => rclone
                .exists(loc, &format!("{dir}_index.md"))
                .map_err(|e| ProbeError { at: format!("{dir}_index.md"), source: Box::new(e) }),
        }
    };
    let spill = slots.with_file_name("rclone-listing");
    let counting = RefCell::new(Some(FolderCensus::new(ignore)));
    let mut observe = |e: &RcloneEntry| {
        if let Some(c) = counting.borrow_mut().as_mut() {
            c.observe(&e.path);
        }
    };
    let listed = rclone.list_sorted(loc, hash.as_deref(), &spill, &mut observe, &mut |e| {
        if let Some(c) = counting.borrow_mut().take() {
            let _ = census.set(c.finish());
        }
        let raw = RawObject { key: e.path.into_bytes(), size: e.size, etag: e.etag, mtime_ms: e.mtime_ms };
        stream.push(raw, &mut probe, sink);
    });
    let mut end = stream.finish(sink);
    if let Err(e) = listed {
        end.listing_error = Some(crate::error::chain(&e));
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_in_byte_order_and_filters_a_target() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        // `a-c` sorts before `a/` in byte order, though `a` < `a-c` by name.
        for p in ["a/b.md", "a-c.md", "a.md", "b/x/y.md", "b/x.md", "b.txt"] {
            let f = r.join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, "x").unwrap();
        }
        let mut got = vec![];
        let end = list_each(ListSource::Walk(r.to_path_buf(), false), &[], None, &mut |f| got.push(f.rel));
        let mut want = got.clone();
        want.sort();
        assert_eq!(got, want);
        assert_eq!(got.len(), 6);
        assert!(end.files.is_empty() && end.listing_error.is_none());
        let mut one = vec![];
        list_each(ListSource::Walk(r.to_path_buf(), false), &[], Some("b/x.md"), &mut |f| one.push(f.rel));
        assert_eq!(one, vec!["b/x.md"]);
        let failed = list_each(ListSource::Failed("gone".into()), &[], None, &mut |_| panic!("no files"));
        assert_eq!(failed.listing_error.as_deref(), Some("gone"));
    }
}
