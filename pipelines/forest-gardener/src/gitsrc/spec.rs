//! The `git:LOCATOR[#REF][:SUBDIR]` source spec, parsed without I/O.
//!
//! LOCATOR is a local repository path (working tree or bare) or a URL git
//! can fetch (`file://`, `git://`, `ssh://`, `https://`, scp-like
//! `user@host:path`). A ref never contains `:` (git refuses it), so after
//! `#REF` the first `:` starts SUBDIR. Without `#REF`, SUBDIR starts at
//! the last `:` of the locator's path part (after a URL's authority, after
//! the host of the scp-like form): a local path holding `:` needs the
//! `#REF:SUBDIR` form.

use super::error::GitSourceError;
use std::fmt;

/// Where the repository is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Locator {
    /// A repository on this machine, read in place (never written).
    Path(String),
    /// A URL or scp-like address, fetched into a mirror under `_derived/`.
    Url(String),
}

/// A parsed `git:` source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSpec {
    /// The repository.
    pub locator: Locator,
    /// Branch, tag or commit (None: the repository's HEAD).
    pub reference: Option<String>,
    /// Folder inside the repository that is the source (None: the root).
    pub subdir: Option<String>,
}

/// The prefix of a git source uri.
pub const PREFIX: &str = "git:";

/// Is `uri` a git source?
pub fn is_git(uri: &str) -> bool {
    uri.starts_with(PREFIX)
}

impl GitSpec {
    /// Parse `git:LOCATOR[#REF][:SUBDIR]`; the error is one clear line.
    pub fn parse(uri: &str) -> Result<GitSpec, GitSourceError> {
        let bad = |reason: String| GitSourceError::Spec { uri: uri.to_string(), reason };
        let body = uri.strip_prefix(PREFIX).ok_or_else(|| bad("not a git source".into()))?;
        let (loc, reference, subdir) = match body.split_once('#') {
            Some((loc, rest)) => {
                let (r, sub) = match rest.split_once(':') {
                    Some((r, s)) => (r, Some(s)),
                    None => (rest, None),
                };
                (loc, Some(r), sub)
            }
            None => match subdir_split(body) {
                Some(i) => (&body[..i], None, Some(&body[i + 1..])),
                None => (body, None, None),
            },
        };
        if loc.is_empty() {
            return Err(bad("no repository before '#' or ':'".into()));
        }
        if let Some(why) = reference.and_then(bad_ref) {
            return Err(bad(why));
        }
        let subdir = match subdir {
            Some(s) => normalize_subdir(uri, s)?,
            None => None,
        };
        let locator = if is_url(loc) { Locator::Url(loc.to_string()) } else { Locator::Path(loc.to_string()) };
        Ok(GitSpec { locator, reference: reference.map(str::to_string), subdir })
    }

    /// The locator as written (path or URL).
    pub fn location(&self) -> &str {
        match &self.locator {
            Locator::Path(p) | Locator::Url(p) => p,
        }
    }

    /// The same spec with another locator (a canonical local path).
    pub fn with_location(&self, loc: String) -> GitSpec {
        let locator = match self.locator {
            Locator::Path(_) => Locator::Path(loc),
            Locator::Url(_) => Locator::Url(loc),
        };
        GitSpec { locator, ..self.clone() }
    }
}

impl fmt::Display for GitSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}", self.location())?;
        match (&self.reference, &self.subdir) {
            (Some(r), Some(s)) => write!(f, "#{r}:{s}"),
            (Some(r), None) => write!(f, "#{r}"),
            // A local path holding ':' would be misread: keep the '#' form.
            (None, Some(s)) if self.location().contains(':') && !is_url(self.location()) => write!(f, "#HEAD:{s}"),
            (None, Some(s)) => write!(f, ":{s}"),
            (None, None) => Ok(()),
        }
    }
}

/// A URL (`scheme://`) or an scp-like `[user@]host:path` (a `:` before any
/// `/`, and not a local path).
fn is_url(loc: &str) -> bool {
    if loc.contains("://") {
        return true;
    }
    if loc.starts_with('/') || loc.starts_with('.') || loc.starts_with('~') {
        return false;
    }
    match (loc.find(':'), loc.find('/')) {
        (Some(c), Some(s)) => c < s && c > 0,
        (Some(c), None) => c > 0,
        _ => false,
    }
}

/// Where SUBDIR starts in a spec without `#REF`: the last `:` of the
/// locator's path part.
fn subdir_split(body: &str) -> Option<usize> {
    let path_start = if let Some(i) = body.find("://") {
        let after = i + 3;
        after + body[after..].find('/')?
    } else if is_url(body) {
        body.find(':')? + 1
    } else {
        0
    };
    body[path_start..].rfind(':').map(|i| path_start + i)
}

/// Why `r` is not a usable ref (None: it is).
fn bad_ref(r: &str) -> Option<String> {
    if r.is_empty() {
        return Some("empty ref after '#'".into());
    }
    let odd = |c: char| c.is_whitespace() || c.is_control() || matches!(c, '~' | '^' | '?' | '*' | '[' | '\\');
    (r.chars().any(odd) || r.contains("..") || r.starts_with('-')).then(|| format!("'{r}' is not a valid git ref"))
}

/// SUBDIR without its outer slashes (None: the root).
fn normalize_subdir(uri: &str, s: &str) -> Result<Option<String>, GitSourceError> {
    let bad = |reason: String| GitSourceError::Spec { uri: uri.to_string(), reason };
    let t = s.trim_matches('/');
    if t.is_empty() {
        return Ok(None);
    }
    if t.split('/').any(|c| c.is_empty() || c == "." || c == ".." || c == ".git") {
        return Err(bad(format!("sub-folder '{s}' has an empty, '.', '..' or '.git' segment")));
    }
    if t.chars().any(|c| c.is_control() || c == '\\') {
        return Err(bad(format!("sub-folder '{s}' contains control characters or a backslash")));
    }
    Ok(Some(t.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> GitSpec {
        GitSpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn local_paths_refs_and_subdirs() {
        let g = p("git:/srv/handbook.git");
        assert_eq!(g.locator, Locator::Path("/srv/handbook.git".into()));
        assert_eq!((g.reference, g.subdir), (None, None));
        let g = p("git:/srv/handbook:docs/ops/");
        assert_eq!(g.location(), "/srv/handbook");
        assert_eq!(g.subdir.as_deref(), Some("docs/ops"));
        let g = p("git:./repo#release/2.0:docs");
        assert_eq!(g.locator, Locator::Path("./repo".into()));
        assert_eq!(g.reference.as_deref(), Some("release/2.0"));
        assert_eq!(g.subdir.as_deref(), Some("docs"));
        let g = p("git:/a:b/repo#main");
        assert_eq!((g.location(), g.subdir.as_deref()), ("/a:b/repo", None));
    }

    #[test]
    fn urls_keep_their_colons() {
        let g = p("git:https://github.com/org/wiki.git");
        assert_eq!(g.locator, Locator::Url("https://github.com/org/wiki.git".into()));
        assert_eq!(g.subdir, None);
        let g = p("git:http://127.0.0.1:8080/r.git:docs");
        assert_eq!(g.location(), "http://127.0.0.1:8080/r.git");
        assert_eq!(g.subdir.as_deref(), Some("docs"));
        let g = p("git:git@github.com:org/repo.git");
        assert_eq!((g.location(), g.subdir.as_deref()), ("git@github.com:org/repo.git", None));
        let g = p("git:git@github.com:org/repo.git:handbook");
        assert_eq!((g.location(), g.subdir.as_deref()), ("git@github.com:org/repo.git", Some("handbook")));
        let g = p("git:git://127.0.0.1:9418/r#v1.2:a/b");
        assert_eq!(
            (g.location(), g.reference.as_deref(), g.subdir.as_deref()),
            ("git://127.0.0.1:9418/r", Some("v1.2"), Some("a/b"))
        );
        assert!(matches!(p("git:file:///tmp/r.git").locator, Locator::Url(_)));
    }

    #[test]
    fn round_trips_and_refusals() {
        for s in
            ["git:/srv/r", "git:/srv/r#main", "git:/srv/r:docs", "git:https://h/o/r.git#v1:docs", "git:/a:b#HEAD:docs"]
        {
            assert_eq!(p(s).to_string(), s);
            assert_eq!(p(&p(s).to_string()), p(s));
        }
        assert_eq!(p("git:/a:b#HEAD:docs").with_location("/a:b".into()).to_string(), "git:/a:b#HEAD:docs");
        for bad in
            ["git:", "git:#main", "git:/r#", "git:/r#a..b", "git:/r#x y", "git:/r:../up", "git:/r#m:a//b", "s3://b"]
        {
            assert!(GitSpec::parse(bad).is_err(), "{bad}");
        }
        assert!(is_git("git:/r") && !is_git("/git/r"));
    }
}
