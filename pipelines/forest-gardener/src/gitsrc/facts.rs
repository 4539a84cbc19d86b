//! Who last changed a file, when, and where to see it on the web.
//!
//! The last change of a path is found by walking the history from the
//! mirrored commit (newest first) and diffing each commit with its first
//! parent over the source's folder ([`super::tree::diff`]: a commit that
//! did not touch the folder costs one tree lookup). The walk is shared by
//! every file of a run and goes on only as far as a question needs, at
//! most [`MAX_COMMITS`] commits: a file not changed within them is
//! `unknown`. A sync asks about the files it just changed, found in the
//! first commits.

use super::tree::{diff, Found};
use super::{GitSource, GitSourceError};
use git2::{Oid, Repository};
use std::collections::HashMap;

/// Commits examined per run at most for the last author of files.
pub const MAX_COMMITS: usize = 1000;

/// The passport's git facts of one file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileFacts {
    /// Author name of the last commit that changed the file (None beyond
    /// the walk's bound: `unknown`).
    pub author: Option<String>,
    /// Its author date, RFC 3339 with the author's offset.
    pub date: Option<String>,
    /// The file at the mirrored commit on the forge's web UI.
    pub url: Option<String>,
}

/// The shared, progressive history walk of one run.
#[derive(Default)]
pub struct Facts {
    commits: Option<Vec<Oid>>,
    next: usize,
    found: HashMap<String, (String, String)>,
}

impl Facts {
    /// Facts of `path` (repository-relative).
    pub(crate) fn of(&mut self, src: &GitSource, path: &str) -> FileFacts {
        let url = src.web.as_ref().map(|w| format!("{w}{}/{}", src.commit, encode_path(path)));
        let mut out = FileFacts { url, ..Default::default() };
        if let Some((a, d)) = self.lookup(src, path) {
            out.author = Some(a);
            out.date = Some(d);
        }
        out
    }

    fn lookup(&mut self, src: &GitSource, path: &str) -> Option<(String, String)> {
        if let Some(hit) = self.found.get(path) {
            return Some(hit.clone());
        }
        let repo = src.repo().ok()?;
        if self.commits.is_none() {
            self.commits = Some(history(&repo, src.commit).unwrap_or_default());
        }
        let commits = self.commits.as_ref()?;
        while self.next < commits.len() {
            let c = commits[self.next];
            self.next += 1;
            let Ok(changed) = changed_paths(&repo, src, c) else { continue };
            let Ok(commit) = repo.find_commit(c) else { continue };
            let who = commit.author();
            let name = who.name().unwrap_or("unknown").to_string();
            let date = rfc3339(who.when());
            for p in changed {
                self.found.entry(p).or_insert_with(|| (name.clone(), date.clone()));
            }
            if let Some(hit) = self.found.get(path) {
                return Some(hit.clone());
            }
        }
        None
    }
}

/// Up to [`MAX_COMMITS`] commits from `head`, newest first.
fn history(repo: &Repository, head: Oid) -> Result<Vec<Oid>, git2::Error> {
    let mut walk = repo.revwalk()?;
    walk.set_sorting(git2::Sort::TIME | git2::Sort::TOPOLOGICAL)?;
    walk.push(head)?;
    Ok(walk.take(MAX_COMMITS).filter_map(Result::ok).collect())
}

/// Repository paths commit `c` changed in the source's folder, against its
/// first parent (every file for a root commit).
fn changed_paths(repo: &Repository, src: &GitSource, c: Oid) -> Result<Vec<String>, GitSourceError> {
    let commit = repo.find_commit(c).map_err(GitSourceError::read(format!("cannot read commit {c}")))?;
    let folder = |t: git2::Tree<'_>| -> Option<Oid> {
        match &src.spec.subdir {
            None => Some(t.id()),
            Some(s) => t.get_path(std::path::Path::new(s)).ok().map(|e| e.id()),
        }
    };
    let read = || GitSourceError::read(format!("cannot read the trees of commit {c}"));
    let new = folder(commit.tree().map_err(read())?);
    let old = match commit.parent(0) {
        Ok(p) => folder(p.tree().map_err(read())?),
        Err(_) => None,
    };
    if new == old {
        return Ok(vec![]);
    }
    let empty = repo.treebuilder(None).and_then(|b| b.write()).map_err(read())?;
    let t1 = repo.find_tree(new.unwrap_or(empty)).map_err(read())?;
    let t0 = repo.find_tree(old.unwrap_or(empty)).map_err(read())?;
    let mut out = Found::default();
    diff(repo, &t0, &t1, b"", &mut out)?;
    Ok(out.files.into_iter().map(|f| src.repo_path(&String::from_utf8_lossy(&f.key))).collect())
}

fn rfc3339(t: git2::Time) -> String {
    let off = chrono::FixedOffset::east_opt(t.offset_minutes() * 60)
        .unwrap_or(chrono::FixedOffset::east_opt(0).expect("utc"));
    match chrono::DateTime::from_timestamp(t.seconds(), 0) {
        Some(d) => d.with_timezone(&off).to_rfc3339(),
        None => "unknown".into(),
    }
}

fn encode_path(p: &str) -> String {
    const SET: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'/').remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(p, SET).to_string()
}

/// The web prefix of a file link for a GitHub or GitLab remote
/// (`https://github.com/o/r/blob/`, `https://gitlab.com/g/r/-/blob/`);
/// the link is the prefix, the commit, `/`, the path. None for other
/// hosts (no forge is guessed) and for local paths. Credentials in the URL
/// are never copied.
pub fn web_base(url: &str) -> Option<String> {
    let rest = if let Some(r) = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://")) {
        r.to_string()
    } else if let Some(r) = url.strip_prefix("ssh://") {
        r.to_string()
    } else if !url.contains("://") && url.contains('@') && url.contains(':') {
        url.replacen(':', "/", 1) // scp-like git@host:o/r
    } else {
        return None;
    };
    let rest = rest.rsplit_once('@').map(|(_, h)| h.to_string()).unwrap_or(rest);
    let (host, path) = rest.split_once('/')?;
    let host = host.split(':').next()?.to_ascii_lowercase();
    let path = path.trim_end_matches('/').trim_end_matches(".git");
    if path.split('/').filter(|s| !s.is_empty()).count() < 2 {
        return None;
    }
    if host == "github.com" {
        Some(format!("https://{host}/{path}/blob/"))
    } else if host == "gitlab.com" || host.starts_with("gitlab.") {
        Some(format!("https://{host}/{path}/-/blob/"))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn web_links_for_github_and_gitlab_only() {
        let gh = Some("https://github.com/rust-lang/book/blob/".to_string());
        assert_eq!(web_base("https://github.com/rust-lang/book.git"), gh);
        assert_eq!(web_base("https://user:token@github.com/rust-lang/book"), gh);
        assert_eq!(web_base("git@github.com:rust-lang/book.git"), gh);
        assert_eq!(web_base("ssh://git@github.com/rust-lang/book.git"), gh);
        assert_eq!(web_base("https://gitlab.com/g/sub/r.git"), Some("https://gitlab.com/g/sub/r/-/blob/".into()));
        assert_eq!(web_base("https://gitlab.example.org/g/r"), Some("https://gitlab.example.org/g/r/-/blob/".into()));
        assert_eq!(web_base("git://127.0.0.1/r.git"), None);
        assert_eq!(web_base("/srv/r.git"), None);
        assert_eq!(web_base("https://github.com/only-owner"), None);
        assert_eq!(web_base("https://example.org/o/r"), None);
        assert_eq!(encode_path("docs/a b#c.md"), "docs/a%20b%23c.md");
    }

    #[test]
    fn dates_keep_the_author_offset() {
        assert_eq!(rfc3339(git2::Time::new(1_700_000_000, 120)), "2023-11-15T00:13:20+02:00");
    }
}
