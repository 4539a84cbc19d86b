//! `_meta/gardener.yaml`: dialect keys plus our `sources:` list (DESIGN §3).
//! Unknown keys are kept; the file is rewritten whole on save. The file is
//! versioned: [`versioned_change`] hands a changed, validated copy to the
//! batch commit that first needs it, so a clone syncs with the recorded
//! sources. A `uri` may name environment variables (`file://${DRIVE_ROOT}/x`),
//! resolved at run time by [`SourceConfig::resolved_uri`].

use crate::{DerivedError, Result};
use forest_model::yaml::{self, Mapping, Value};
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Path of the config inside a forest.
pub const CONFIG_PATH: &str = "_meta/gardener.yaml";

/// One named source.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SourceConfig {
    /// Unique name (`default` for the legacy `source_root`).
    pub name: String,
    /// Local path (absolute, POSIX), `s3://bucket/prefix`,
    /// `rclone:REMOTE:path` or `git:PATH_OR_URL[#REF][:SUBDIR]`.
    pub uri: String,
    /// Branch prefix the mirror is rooted under (`None` = forest root).
    pub dest: Option<String>,
    /// FLESH policy: `inline` | `cached` | `reference`.
    pub content: String,
    /// `never` | `always`.
    pub archive: String,
    /// Extra ignore globs for this source.
    pub ignore: Vec<String>,
    /// S3-compatible endpoint for `s3://` sources (else the AWS environment).
    pub endpoint_url: Option<String>,
    /// Path-style S3 addressing (None = automatic: on with a custom endpoint).
    pub path_style: Option<bool>,
    /// rclone config file for an `rclone:` source (may name `${VAR}`; else
    /// `RCLONE_CONFIG` or rclone's default). Only the path is recorded,
    /// never what the file holds.
    pub rclone_config: Option<String>,
    /// Follow directory symlinks inside a local source (off by default;
    /// loops and targets outside the source are refused either way).
    pub follow_symlinks: bool,
}

impl SourceConfig {
    /// The uri with `${VAR}` references replaced from the environment; a
    /// clear `E_CONFIG` error names the variable when it is unset.
    pub fn resolved_uri(&self) -> Result<String> {
        expand_env(&self.uri, |k| std::env::var(k).ok())
            .map_err(|e| DerivedError::Config(format!("source '{}': uri {}: {e}", self.name, self.uri)))
    }
}

/// A `${NAME}` reference that cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvRefError {
    /// `${` without its `}`.
    #[error("unterminated ${{ in the uri")]
    Unterminated,
    /// Not `[A-Za-z_][A-Za-z0-9_]*`.
    #[error("'${{{0}}}' is not a valid environment variable reference")]
    BadName(String),
    /// Set, but empty.
    #[error("environment variable {0} is empty")]
    Empty(String),
    /// Not set.
    #[error("environment variable {0} is not set (export {0}=... before the run)")]
    Unset(String),
}

impl EnvRefError {
    /// Stable error code.
    pub fn code(&self) -> &'static str {
        "E_CONFIG"
    }
}

/// Replace every `${NAME}` in `uri` with `lookup(NAME)`. `NAME` is
/// `[A-Za-z_][A-Za-z0-9_]*`; a bare `$` is kept as written. Errors name an
/// unset variable, an empty value, or a malformed reference.
pub fn expand_env(uri: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, EnvRefError> {
    let mut out = String::with_capacity(uri.len());
    let mut rest = uri;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(EnvRefError::Unterminated);
        };
        let name = &after[..end];
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(EnvRefError::BadName(name.to_string()));
        }
        match lookup(name) {
            Some(v) if !v.is_empty() => out.push_str(&v),
            Some(_) => return Err(EnvRefError::Empty(name.to_string())),
            None => return Err(EnvRefError::Unset(name.to_string())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// True when a uri names an environment variable.
pub fn names_env(uri: &str) -> bool {
    uri.contains("${")
}

/// FLESH policies (dialect §3.11).
pub const CONTENT_POLICIES: [&str; 3] = ["inline", "cached", "reference"];
/// Archive policies (dialect §3.10).
pub const ARCHIVE_POLICIES: [&str; 2] = ["never", "always"];

/// Refuse unknown `content` / `archive` values.
pub fn check_policies(s: &SourceConfig) -> Result<()> {
    if !CONTENT_POLICIES.contains(&s.content.as_str()) {
        return Err(DerivedError::Config(format!(
            "source '{}': content must be one of inline, cached, reference (got '{}')",
            s.name, s.content
        )));
    }
    if !ARCHIVE_POLICIES.contains(&s.archive.as_str()) {
        return Err(DerivedError::Config(format!(
            "source '{}': archive must be never or always (got '{}')",
            s.name, s.archive
        )));
    }
    Ok(())
}

/// S3 options of a source: the AWS environment, overridden by the source's
/// recorded `endpoint_url` / `path_style`.
pub fn s3_options(src: &SourceConfig) -> forest_storage::S3Options {
    let mut o = forest_storage::S3Options::from_env();
    if let Some(e) = &src.endpoint_url {
        o.endpoint_url = Some(e.clone());
        o.path_style = true;
    }
    if let Some(p) = src.path_style {
        o.path_style = p;
    }
    o
}

/// rclone options of a source: the environment (`FOREST_RCLONE`,
/// `RCLONE_CONFIG`), overridden by the source's recorded `rclone_config`
/// (its `${VAR}`s resolved).
pub fn rclone_options(src: &SourceConfig) -> Result<forest_storage::RcloneOptions> {
    let mut o = forest_storage::RcloneOptions::from_env();
    if let Some(c) = &src.rclone_config {
        let path = expand_env(c, |k| std::env::var(k).ok())
            .map_err(|e| DerivedError::Config(format!("source '{}': rclone_config {c}: {e}", src.name)))?;
        o.config = Some(PathBuf::from(path));
    }
    Ok(o)
}

/// One entry of `sources:` (`content` and `archive` are the file-wide
/// defaults).
fn source_entry(m: &Mapping, content: &str, archive: &str) -> Result<SourceConfig> {
    let name = get_str(m, "name").ok_or_else(|| DerivedError::Config("sources: entry without name".into()))?;
    let uri = get_str(m, "uri").ok_or_else(|| DerivedError::Config(format!("sources: '{name}' has no uri")))?;
    let follow_symlinks = match m.get("follow_symlinks") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(DerivedError::Config(format!("sources: '{name}': follow_symlinks must be true or false")))
        }
    };
    Ok(SourceConfig {
        name,
        uri,
        dest: get_str(m, "dest").filter(|d| !d.is_empty()),
        content: get_str(m, "content").unwrap_or_else(|| content.to_string()),
        archive: get_str(m, "archive").unwrap_or_else(|| archive.to_string()),
        ignore: str_list(m.get("ignore")),
        endpoint_url: get_str(m, "endpoint_url").filter(|e| !e.is_empty()),
        path_style: m.get("path_style").and_then(|v| v.as_bool()),
        rclone_config: get_str(m, "rclone_config").filter(|c| !c.is_empty()),
        follow_symlinks,
    })
}

/// Every source passes its policies, has a name of its own and a uri of
/// valid syntax.
fn check_sources(sources: &[SourceConfig]) -> Result<()> {
    let mut names = std::collections::HashSet::new();
    for s in sources {
        check_policies(s)?;
        if !names.insert(s.name.as_str()) {
            return Err(DerivedError::Config(format!("sources: the name '{}' is used twice", s.name)));
        }
        if s.uri.trim().is_empty() {
            return Err(DerivedError::Config(format!("sources: '{}' has an empty uri", s.name)));
        }
        // Syntax only: the variables themselves are resolved at run time.
        expand_env(&s.uri, |_| Some("x".into()))
            .map_err(|e| DerivedError::Config(format!("sources: '{}': uri {}: {e}", s.name, s.uri)))?;
    }
    Ok(())
}

/// Parsed gardener config.
#[derive(Debug, Clone)]
pub struct GardenerConfig {
    raw: Mapping,
    /// Named sources (legacy `source_root` included as `default`).
    pub sources: Vec<SourceConfig>,
    /// Global extra ignore globs.
    pub ignore: Vec<String>,
    /// `".ext": "cmd {input} {output}"` hooks.
    pub converters: BTreeMap<String, String>,
    /// `{folder: PREFIX}` alias conventions.
    pub aliases: IndexMap<String, String>,
    /// `curation.default_tags`.
    pub default_tags: Vec<String>,
    /// `curation.directives`.
    pub directives: String,
    /// Refuse to mark more than this share of a source stale in one run.
    pub max_stale_fraction: f64,
    /// Largest source file converted.
    pub max_file_bytes: u64,
    /// Converter time limit in seconds.
    pub convert_timeout_secs: u64,
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Sequence(s)) => s.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
        Some(Value::String(s)) => vec![s.clone()],
        _ => vec![],
    }
}

fn get_str(m: &Mapping, k: &str) -> Option<String> {
    m.get(k).and_then(|v| v.as_str()).map(String::from)
}

impl GardenerConfig {
    /// Load from a forest (absent file = defaults).
    pub fn load(forest: &Path) -> Result<GardenerConfig> {
        let p = forest.join(CONFIG_PATH);
        let raw = match std::fs::read_to_string(&p) {
            Ok(t) => yaml::parse_mapping(&t).map_err(|e| DerivedError::Config(format!("{CONFIG_PATH}: {e}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Mapping::new(),
            Err(e) => return Err(DerivedError::io(p.display().to_string(), e)),
        };
        Self::from_mapping(raw)
    }

    fn from_mapping(raw: Mapping) -> Result<GardenerConfig> {
        let content = get_str(&raw, "content").unwrap_or_else(|| "inline".into());
        let archive = get_str(&raw, "archive").unwrap_or_else(|| "never".into());
        let mut sources = vec![];
        if let Some(Value::Sequence(list)) = raw.get("sources") {
            for s in list {
                let Some(m) = s.as_mapping() else {
                    return Err(DerivedError::Config("sources: every entry must be a mapping".into()));
                };
                sources.push(source_entry(m, &content, &archive)?);
            }
        }
        if let Some(root) = get_str(&raw, "source_root") {
            // `source_root` mirrors the first source (resolved when its uri
            // names variables; unresolvable here counts as that source).
            let mirrors = |s: &SourceConfig| {
                s.uri == root
                    || (names_env(&s.uri)
                        && s.resolved_uri().map_or(true, |u| {
                            local_path(&u).and_then(|p| p.to_str().map(String::from)) == Some(root.clone())
                        }))
            };
            if !sources.iter().any(mirrors) && !sources.iter().any(|s| s.name == "default") {
                sources.insert(
                    0,
                    SourceConfig {
                        name: "default".into(),
                        uri: root,
                        dest: get_str(&raw, "dest").filter(|d| !d.is_empty()),
                        content: content.clone(),
                        archive: archive.clone(),
                        ignore: vec![],
                        endpoint_url: None,
                        path_style: None,
                        rclone_config: None,
                        follow_symlinks: false,
                    },
                );
            }
        }
        check_sources(&sources)?;
        let mut converters = BTreeMap::new();
        if let Some(Value::Mapping(m)) = raw.get("converters") {
            for (k, v) in m {
                if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
                    converters.insert(k.to_lowercase(), v.to_string());
                }
            }
        }
        let mut aliases = IndexMap::new();
        if let Some(Value::Mapping(m)) = raw.get("aliases") {
            for (k, v) in m {
                if let (Some(k), Some(v)) = (k.as_str(), v.as_str()) {
                    aliases.insert(k.to_string(), v.to_string());
                }
            }
        }
        let curation = raw.get("curation").and_then(|v| v.as_mapping()).cloned().unwrap_or_default();
        let num = |k: &str| raw.get(k).and_then(|v| v.as_f64());
        let max_stale_fraction = num("max_stale_fraction").unwrap_or(0.5);
        if !(0.0..=1.0).contains(&max_stale_fraction) {
            return Err(DerivedError::Config("max_stale_fraction must be in [0, 1]".into()));
        }
        Ok(GardenerConfig {
            ignore: str_list(raw.get("ignore")),
            converters,
            aliases,
            default_tags: str_list(curation.get("default_tags")),
            directives: get_str(&curation, "directives").unwrap_or_default(),
            max_stale_fraction,
            max_file_bytes: num("max_file_bytes").map(|f| f as u64).unwrap_or(256 * 1024 * 1024),
            convert_timeout_secs: num("convert_timeout_secs").map(|f| f as u64).unwrap_or(120),
            sources,
            raw,
        })
    }

    /// Source by name.
    pub fn source(&self, name: &str) -> Option<&SourceConfig> {
        self.sources.iter().find(|s| s.name == name)
    }

    /// The forest folder the file `source_path` of source `source_name`
    /// (the first source when `None`, as `content: reference` reads it)
    /// maps to ([`forest_model::scope::source_home`]); `None` when that
    /// source is not configured or the path climbs out of it.
    pub fn source_home(&self, source_name: Option<&str>, source_path: &str) -> Option<String> {
        let src = match source_name {
            Some(n) => self.source(n),
            None => self.sources.first(),
        }?;
        forest_model::scope::source_home(src.dest.as_deref(), source_path)
    }

    /// Record a source (replacing one with the same name) and, for the first
    /// local source, the dialect's `source_root`/`dest` keys so dialect
    /// readers (Ranger stale check, `content: reference`) keep working.
    pub fn add_source(&mut self, src: SourceConfig) {
        match self.sources.iter_mut().find(|s| s.name == src.name) {
            Some(s) => *s = src,
            None => self.sources.push(src),
        }
        let list: Vec<Value> = self
            .sources
            .iter()
            .map(|s| {
                let mut m = Mapping::new();
                m.insert("name".into(), s.name.clone().into());
                m.insert("uri".into(), s.uri.clone().into());
                if let Some(d) = &s.dest {
                    m.insert("dest".into(), d.clone().into());
                }
                m.insert("content".into(), s.content.clone().into());
                m.insert("archive".into(), s.archive.clone().into());
                if let Some(e) = &s.endpoint_url {
                    m.insert("endpoint_url".into(), e.clone().into());
                }
                if let Some(p) = s.path_style {
                    m.insert("path_style".into(), Value::Bool(p));
                }
                if let Some(c) = &s.rclone_config {
                    m.insert("rclone_config".into(), c.clone().into());
                }
                if s.follow_symlinks {
                    m.insert("follow_symlinks".into(), Value::Bool(true));
                }
                if !s.ignore.is_empty() {
                    m.insert("ignore".into(), Value::Sequence(s.ignore.iter().map(|i| i.clone().into()).collect()));
                }
                Value::Mapping(m)
            })
            .collect();
        if let Some(first) = self.sources.first() {
            // Dialect readers need a real path: a uri naming variables is
            // recorded as resolved here (absent when it cannot be).
            let root =
                first.resolved_uri().ok().and_then(|u| local_path(&u)).and_then(|p| p.to_str().map(String::from));
            if let Some(root) = root {
                self.raw.insert("source_root".into(), root.into());
                match &first.dest {
                    Some(d) => {
                        self.raw.insert("dest".into(), d.clone().into());
                    }
                    None => {
                        self.raw.shift_remove("dest");
                    }
                }
            }
        }
        self.raw.insert("sources".into(), Value::Sequence(list));
    }

    /// The YAML text [`Self::save`] writes.
    pub fn to_text(&self) -> String {
        format!("{}\n", yaml::emit_mapping(&self.raw))
    }

    /// Write `_meta/gardener.yaml` atomically (work tree only: the next
    /// batch commit versions it, see [`versioned_change`]).
    pub fn save(&self, forest: &Path) -> Result<()> {
        forest_fs::atomic_write(&forest.join(CONFIG_PATH), self.to_text().as_bytes())
            .map_err(|e| DerivedError::io(CONFIG_PATH, e))
    }

    /// Parse and validate a config text (what a commit of it must pass).
    pub fn validate_text(text: &str) -> Result<GardenerConfig> {
        let raw = yaml::parse_mapping(text).map_err(|e| DerivedError::Config(format!("{CONFIG_PATH}: {e}")))?;
        Self::from_mapping(raw)
    }
}

/// The change that versions `_meta/gardener.yaml`: `Some` when the work
/// tree's copy differs from HEAD's, after validating it (an invalid file is
/// never committed: `E_CONFIG`). `None` when absent or already committed.
pub fn versioned_change(forest: &Path, git: &forest_git::GitForest) -> Result<Option<forest_git::Change>> {
    let bytes = match std::fs::read(forest.join(CONFIG_PATH)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(DerivedError::io(CONFIG_PATH, e)),
    };
    if git.read_head_file(CONFIG_PATH)?.as_deref() == Some(bytes.as_slice()) {
        return Ok(None);
    }
    let text = String::from_utf8(bytes).map_err(|_| DerivedError::Config(format!("{CONFIG_PATH}: not UTF-8")))?;
    GardenerConfig::validate_text(&text)?;
    Ok(Some(forest_git::Change::Write { path: CONFIG_PATH.to_string(), bytes: text.into_bytes() }))
}

/// Resolve a local source uri to a path.
pub fn local_path(uri: &str) -> Option<PathBuf> {
    if let Some(p) = uri.strip_prefix("file://") {
        return Some(PathBuf::from(p));
    }
    if uri.contains("://") || uri.starts_with("rclone:") || uri.starts_with("git:") {
        return None;
    }
    Some(PathBuf::from(uri))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_and_sources() {
        let m =
            yaml::parse_mapping("source_root: /data/a\ndest: imports\nextra_key: 1\ncuration:\n  default_tags: [x]\n")
                .unwrap();
        let mut c = GardenerConfig::from_mapping(m).unwrap();
        assert_eq!(c.sources[0].name, "default");
        assert_eq!(c.sources[0].dest.as_deref(), Some("imports"));
        assert_eq!(c.default_tags, vec!["x"]);
        c.add_source(SourceConfig {
            name: "b".into(),
            uri: "/data/b".into(),
            dest: None,
            content: "inline".into(),
            archive: "never".into(),
            ignore: vec![],
            endpoint_url: None,
            path_style: None,
            rclone_config: Some("${RC}/rclone.conf".into()),
            follow_symlinks: true,
        });
        let text = yaml::emit_mapping(&c.raw);
        assert!(text.contains("extra_key: 1"));
        let again = GardenerConfig::from_mapping(yaml::parse_mapping(&text).unwrap()).unwrap();
        assert_eq!(again.sources.len(), 2);
        assert!(again.sources[1].follow_symlinks && !again.sources[0].follow_symlinks);
        assert_eq!(again.sources[1].rclone_config.as_deref(), Some("${RC}/rclone.conf"));
    }

    #[test]
    fn env_expansion() {
        let env = |k: &str| match k {
            "DRIVE_ROOT" => Some("/mnt/drive".to_string()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        assert_eq!(expand_env("file://${DRIVE_ROOT}/shared", env).unwrap(), "file:///mnt/drive/shared");
        assert_eq!(expand_env("/plain/$HOME/x", env).unwrap(), "/plain/$HOME/x");
        let unset = expand_env("file://${NOPE}/x", env).unwrap_err().to_string();
        assert!(unset.contains("NOPE") && unset.contains("not set"), "{unset}");
        assert!(expand_env("${EMPTY}/x", env).unwrap_err().to_string().contains("empty"));
        assert!(expand_env("${DRIVE_ROOT/x", env).unwrap_err().to_string().contains("unterminated"));
        assert!(expand_env("${1X}/x", env).unwrap_err().to_string().contains("not a valid"));
    }

    #[test]
    fn validation_refuses_bad_configs() {
        for (text, needle) in [
            ("sources:\n- {name: a, uri: /x}\n- {name: a, uri: /y}\n", "used twice"),
            ("sources:\n- {name: a, uri: '${X'}\n", "unterminated"),
            ("sources:\n- {name: a, uri: /x, follow_symlinks: 'yes'}\n", "follow_symlinks"),
            ("sources:\n- {name: a, uri: /x, content: weird}\n", "content"),
            ("max_stale_fraction: 2\n", "max_stale_fraction"),
        ] {
            let e = GardenerConfig::validate_text(text).unwrap_err().to_string();
            assert!(e.contains(needle), "{text}: {e}");
        }
        let ok = GardenerConfig::validate_text("sources:\n- {name: a, uri: 'file://${DRIVE_ROOT}/s'}\nkeep_me: 1\n")
            .unwrap();
        assert_eq!(ok.sources[0].uri, "file://${DRIVE_ROOT}/s");
        assert!(ok.to_text().contains("keep_me: 1"), "unknown keys are kept");
    }
}
