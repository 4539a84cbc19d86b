//! Walking a local source (dialect §3.2-§3.3, DESIGN §10): ignore rules,
//! nested forests pruned, symlinks never leave the root, bad names reported.

use std::path::{Path, PathBuf};

/// Path components that are never walked.
pub const IGNORED_COMPONENTS: [&str; 7] = [".git", ".svn", ".hg", "__pycache__", "node_modules", "_derived", "_assets"];
/// Built-in ignore globs (right-anchored).
pub const IGNORED_GLOBS: [&str; 5] = ["~$*", "*.tmp", "*.lock", ".DS_Store", "Thumbs.db"];

/// One listed file.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// Source-relative POSIX path.
    pub rel: String,
    /// Absolute path to read.
    pub abs: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// Modification time in milliseconds since the epoch.
    pub mtime_ms: i64,
}

/// Result of a walk.
#[derive(Debug, Default)]
pub struct Listing {
    /// Files, sorted by `rel`.
    pub files: Vec<Listed>,
    /// Per-path problems (`(path, message)`), one report line each.
    pub problems: Vec<(String, String)>,
    /// Set when some directory could not be listed: stale marking is then
    /// unsafe (its files would look vanished).
    pub listing_error: Option<String>,
}

/// A right-anchored glob (Python `PurePath.match` semantics), compiled once.
pub struct RightGlob {
    parts: Vec<globset::GlobMatcher>,
}

impl RightGlob {
    /// Compile `pattern`; None when a component is not a valid glob.
    pub fn new(pattern: &str) -> Option<RightGlob> {
        let parts = pattern
            .trim_matches('/')
            .split('/')
            .map(|p| globset::Glob::new(p).ok().map(|g| g.compile_matcher()))
            .collect::<Option<Vec<_>>>()?;
        Some(RightGlob { parts })
    }

    /// Does the pattern match the last components of `rel`?
    pub fn matches(&self, rel: &str) -> bool {
        let comps: Vec<&str> = rel.split('/').collect();
        self.parts.len() <= comps.len() && self.parts.iter().rev().zip(comps.iter().rev()).all(|(m, c)| m.is_match(c))
    }
}

/// Right-anchored glob match of `pattern` against a `/`-separated path.
pub fn glob_match_right(pattern: &str, rel: &str) -> bool {
    RightGlob::new(pattern).is_some_and(|g| g.matches(rel))
}

struct Ignore {
    globs: Vec<RightGlob>,
}

impl Ignore {
    fn component_ignored(name: &str) -> bool {
        IGNORED_COMPONENTS.contains(&name) || name.starts_with('.')
    }
    fn matches(&self, rel: &str) -> bool {
        self.globs.iter().any(|g| g.matches(rel))
    }
}

fn mtime_ms(md: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    md.mtime() * 1000 + md.mtime_nsec() / 1_000_000
}

/// Walk `root`. A failure to read `root` itself is a listing error.
pub fn walk_source(root: &Path, extra_ignore: &[String]) -> Listing {
    let mut listing = Listing::default();
    let canon_root = match std::fs::canonicalize(root) {
        Ok(c) => c,
        Err(e) => {
            listing.listing_error = Some(format!("{}: {e}", root.display()));
            return listing;
        }
    };
    if let Err(e) = std::fs::read_dir(&canon_root) {
        listing.listing_error = Some(format!("{}: {e}", root.display()));
        return listing;
    }
    let ignore = Ignore {
        globs: IGNORED_GLOBS
            .iter()
            .map(|s| s.to_string())
            .chain(extra_ignore.iter().cloned())
            .filter_map(|g| RightGlob::new(&g))
            .collect(),
    };
    let mut problems = vec![];
    let walker = walkdir::WalkDir::new(&canon_root).follow_links(true).sort_by_file_name();
    let mut it = walker.into_iter();
    loop {
        let entry = match it.next() {
            None => break,
            Some(Ok(e)) => e,
            Some(Err(e)) => {
                let path = e
                    .path()
                    .and_then(|p| p.strip_prefix(&canon_root).ok())
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if e.loop_ancestor().is_some() {
                    problems.push((path, "symlink loop: skipped".to_string()));
                } else if e.io_error().is_some_and(|io| io.kind() == std::io::ErrorKind::NotFound) {
                    problems.push((path, "vanished during the walk: skipped".to_string()));
                } else {
                    let msg = format!("cannot list: {e}");
                    listing.listing_error.get_or_insert_with(|| format!("{path}: {msg}"));
                    problems.push((path, msg));
                }
                continue;
            }
        };
        if entry.depth() == 0 {
            continue;
        }
        let Ok(relp) = entry.path().strip_prefix(&canon_root) else {
            continue;
        };
        let Some(rel) = relp.to_str().map(|s| s.replace('\\', "/")) else {
            problems.push((relp.to_string_lossy().into_owned(), "file name is not valid UTF-8: skipped".into()));
            if entry.file_type().is_dir() {
                it.skip_current_dir();
            }
            continue;
        };
        let name = entry.file_name().to_string_lossy();
        let is_dir = entry.file_type().is_dir();
        if Ignore::component_ignored(&name) || ignore.matches(&rel) {
            if is_dir {
                it.skip_current_dir();
            }
            continue;
        }
        if entry.path_is_symlink() {
            // Symlinks may point anywhere: only follow those that stay inside.
            match std::fs::canonicalize(entry.path()) {
                Ok(target) if target.starts_with(&canon_root) => {}
                Ok(_) => {
                    problems.push((rel.clone(), "symlink points outside the source: skipped".into()));
                    if is_dir {
                        it.skip_current_dir();
                    }
                    continue;
                }
                Err(e) => {
                    problems.push((rel.clone(), format!("broken symlink: {e}")));
                    continue;
                }
            }
        }
        if is_dir {
            if entry.path().join("_index.md").exists() {
                // A forest is never a source: prune nested forests whole.
                it.skip_current_dir();
            }
            continue;
        }
        if !entry.file_type().is_file() {
            continue;
        }
        match entry.metadata() {
            Ok(md) => listing.files.push(Listed {
                rel,
                abs: entry.path().to_path_buf(),
                size: md.len(),
                mtime_ms: mtime_ms(&md),
            }),
            Err(e) => problems.push((rel, format!("cannot stat: {e}"))),
        }
    }
    listing.files.sort_by(|a, b| a.rel.cmp(&b.rel));
    listing.problems = problems;
    listing
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_anchored_globs() {
        assert!(glob_match_right("*.tmp", "a/b/c.tmp"));
        assert!(glob_match_right("~$*", "x/~$doc.docx"));
        assert!(glob_match_right("b/*.md", "a/b/c.md"));
        assert!(!glob_match_right("b/*.md", "a/c/c.md"));
        assert!(!glob_match_right("a/b/c/d", "c/d"));
    }

    #[test]
    fn walk_rules() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        std::fs::create_dir_all(r.join("a/.hidden")).unwrap();
        std::fs::create_dir_all(r.join("nested")).unwrap();
        std::fs::create_dir_all(r.join("node_modules")).unwrap();
        std::fs::write(r.join("a/x.md"), "x").unwrap();
        std::fs::write(r.join("a/.hidden/y.md"), "y").unwrap();
        std::fs::write(r.join("a/z.tmp"), "z").unwrap();
        std::fs::write(r.join("nested/_index.md"), "f").unwrap();
        std::fs::write(r.join("node_modules/m.md"), "m").unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "s").unwrap();
        std::os::unix::fs::symlink(outside.path(), r.join("escape")).unwrap();
        std::os::unix::fs::symlink(r.join("a"), r.join("a/loop")).unwrap();
        let l = walk_source(r, &[]);
        let rels: Vec<&str> = l.files.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, vec!["a/x.md"]);
        assert!(l.problems.iter().any(|(p, m)| p == "escape" && m.contains("outside")));
        assert!(l.problems.iter().any(|(_, m)| m.contains("loop")), "{:?}", l.problems);
        assert!(l.listing_error.is_none());
    }
}
