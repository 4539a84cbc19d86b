//! A folder census taken from a recursive listing while it is read, for
//! sources whose listing is complete before the first file reaches the
//! planner (rclone: the external sort reads the whole listing first).
//!
//! It answers the two per-folder questions the planner and the nested-forest
//! probe would otherwise ask the remote one process each: how many
//! sub-folders (and files) a folder holds, and whether it holds `_index.md`
//! (a nested forest). Memory: one 64-bit key and two counters per folder,
//! never a path.
//!
//! Sub-folders are those holding at least one listed file (a files-only
//! listing has no empty folders); ignored and nested-forest folders are not
//! counted, as [`super::census`] does for a local folder.

use super::{census_ignored, Ignore};
use std::collections::hash_map::{DefaultHasher, Entry};
use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

#[derive(Default, Clone, Copy)]
struct Counts {
    subdirs: u32,
    files: u32,
    ignored: bool,
}

/// Per-folder counts of a listing (see the module docs).
pub struct FolderCensus {
    ignore: Ignore,
    folders: HashMap<u64, Counts>,
    /// Folders holding `_index.md` (nested forests), with their parent.
    nested: HashMap<u64, u64>,
    finished: bool,
}

fn key(dir: &str) -> u64 {
    let mut h = DefaultHasher::new();
    dir.trim_end_matches('/').hash(&mut h);
    h.finish()
}

impl FolderCensus {
    /// An empty census applying the built-in and `extra_ignore` rules.
    pub fn new(extra_ignore: &[String]) -> FolderCensus {
        let mut folders = HashMap::new();
        folders.insert(key(""), Counts::default());
        FolderCensus { ignore: Ignore::new(extra_ignore), folders, nested: HashMap::new(), finished: false }
    }

    /// Count one listed file (`rel`: source-relative, `/`-separated).
    pub fn observe(&mut self, rel: &str) {
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        let mut parent = key("");
        let mut end = 0;
        if !dir.is_empty() {
            for comp in dir.split('/') {
                let at = &dir[..end + comp.len()];
                let here = key(at);
                match self.folders.entry(here) {
                    Entry::Occupied(o) if o.get().ignored => return,
                    Entry::Occupied(_) => {}
                    Entry::Vacant(v) => {
                        let ignored = census_ignored(&self.ignore, &dir[..end.saturating_sub(1)], comp);
                        v.insert(Counts { ignored, ..Counts::default() });
                        if ignored {
                            return;
                        }
                        if let Some(p) = self.folders.get_mut(&parent) {
                            p.subdirs = p.subdirs.saturating_add(1);
                        }
                    }
                }
                parent = here;
                end += comp.len() + 1;
            }
        }
        if name == "_index.md" && !dir.is_empty() {
            let grand = dir.rsplit_once('/').map_or("", |(g, _)| g);
            self.nested.insert(parent, key(grand));
        }
        if !census_ignored(&self.ignore, dir, name) {
            if let Some(c) = self.folders.get_mut(&parent) {
                c.files = c.files.saturating_add(1);
            }
        }
    }

    /// Close the census: nested forests leave their parents' counts.
    pub fn finish(mut self) -> FolderCensus {
        if !self.finished {
            let nested: HashSet<(u64, u64)> = self.nested.iter().map(|(k, v)| (*k, *v)).collect();
            for (_, parent) in nested {
                if let Some(p) = self.folders.get_mut(&parent) {
                    p.subdirs = p.subdirs.saturating_sub(1);
                }
            }
            self.finished = true;
        }
        self
    }

    /// (sub-folders, files) directly in `dir` (`""` = the root; a trailing
    /// `/` is ignored); `None` for a folder the listing did not reach.
    pub fn counts(&self, dir: &str) -> Option<(usize, usize)> {
        let c = self.folders.get(&key(dir))?;
        (!c.ignored).then_some((c.subdirs as usize, c.files as usize))
    }

    /// Whether folder `dir` holds `_index.md` (a nested forest).
    pub fn is_nested(&self, dir: &str) -> bool {
        self.nested.contains_key(&key(dir))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn census(paths: &[&str]) -> FolderCensus {
        let mut c = FolderCensus::new(&["drafts".to_string()]);
        for p in paths {
            c.observe(p);
        }
        c.finish()
    }

    #[test]
    fn counts_sub_folders_once_and_files_directly_in_a_folder() {
        let c = census(&["a/x/1.md", "a/x/2.md", "a/y/z/3.md", "a/4.md", "b/5.md", "6.md", "a/x/w/7.md"]);
        assert_eq!(c.counts(""), Some((2, 1)));
        assert_eq!(c.counts("a"), Some((2, 1)));
        assert_eq!(c.counts("a/"), Some((2, 1)));
        assert_eq!(c.counts("a/x"), Some((1, 2)));
        assert_eq!(c.counts("a/y"), Some((1, 0)));
        assert_eq!(c.counts("nowhere"), None);
    }

    #[test]
    fn ignored_and_nested_folders_are_not_sub_folders() {
        let c = census(&[
            "p/.git/config",
            "p/node_modules/m/i.js",
            "p/drafts/d.md",
            "p/inner/_index.md",
            "p/inner/n.md",
            "p/real/r.md",
            "p/~$lock.docx",
            "p/ok.md",
        ]);
        assert_eq!(c.counts("p"), Some((1, 1)), "only p/real counts; ~$lock.docx is ignored");
        assert_eq!(c.counts("p/.git"), None);
        assert_eq!(c.counts("p/drafts"), None);
        assert!(c.is_nested("p/inner/") && c.is_nested("p/inner") && !c.is_nested("p/real"));
    }
}
