//! `_meta/gardener.yaml`: dialect keys plus our `sources:` list (DESIGN §3).
//! Unknown keys are kept; the file is rewritten whole on save.

use crate::GardenError;
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
    /// Local path (absolute, POSIX) or `s3://bucket/prefix`.
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
}

/// FLESH policies (dialect §3.11).
pub const CONTENT_POLICIES: [&str; 3] = ["inline", "cached", "reference"];
/// Archive policies (dialect §3.10).
pub const ARCHIVE_POLICIES: [&str; 2] = ["never", "always"];

/// Refuse unknown `content` / `archive` values.
pub fn check_policies(s: &SourceConfig) -> Result<(), GardenError> {
    if !CONTENT_POLICIES.contains(&s.content.as_str()) {
        return Err(GardenError::Config(format!(
            "source '{}': content must be one of inline, cached, reference (got '{}')",
            s.name, s.content
        )));
    }
    if !ARCHIVE_POLICIES.contains(&s.archive.as_str()) {
        return Err(GardenError::Config(format!(
            "source '{}': archive must be never or always (got '{}')",
            s.name, s.archive
        )));
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
    pub fn load(forest: &Path) -> Result<GardenerConfig, GardenError> {
        let p = forest.join(CONFIG_PATH);
        let raw = match std::fs::read_to_string(&p) {
            Ok(t) => yaml::parse_mapping(&t).map_err(|e| GardenError::Config(format!("{CONFIG_PATH}: {e}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Mapping::new(),
            Err(e) => return Err(GardenError::Io(format!("{}: {e}", p.display()))),
        };
        Self::from_mapping(raw)
    }

    fn from_mapping(raw: Mapping) -> Result<GardenerConfig, GardenError> {
        let content = get_str(&raw, "content").unwrap_or_else(|| "inline".into());
        let archive = get_str(&raw, "archive").unwrap_or_else(|| "never".into());
        let mut sources = vec![];
        if let Some(Value::Sequence(list)) = raw.get("sources") {
            for s in list {
                let Some(m) = s.as_mapping() else {
                    return Err(GardenError::Config("sources: every entry must be a mapping".into()));
                };
                let name =
                    get_str(m, "name").ok_or_else(|| GardenError::Config("sources: entry without name".into()))?;
                let uri =
                    get_str(m, "uri").ok_or_else(|| GardenError::Config(format!("sources: '{name}' has no uri")))?;
                sources.push(SourceConfig {
                    name,
                    uri,
                    dest: get_str(m, "dest").filter(|d| !d.is_empty()),
                    content: get_str(m, "content").unwrap_or_else(|| content.clone()),
                    archive: get_str(m, "archive").unwrap_or_else(|| archive.clone()),
                    ignore: str_list(m.get("ignore")),
                    endpoint_url: get_str(m, "endpoint_url").filter(|e| !e.is_empty()),
                    path_style: m.get("path_style").and_then(|v| v.as_bool()),
                });
            }
        }
        if let Some(root) = get_str(&raw, "source_root") {
            if !sources.iter().any(|s| s.uri == root) && !sources.iter().any(|s| s.name == "default") {
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
                    },
                );
            }
        }
        for s in &sources {
            check_policies(s)?;
        }
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
            return Err(GardenError::Config("max_stale_fraction must be in [0, 1]".into()));
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
                if !s.ignore.is_empty() {
                    m.insert("ignore".into(), Value::Sequence(s.ignore.iter().map(|i| i.clone().into()).collect()));
                }
                Value::Mapping(m)
            })
            .collect();
        if let Some(first) = self.sources.first() {
            if !first.uri.contains("://") {
                self.raw.insert("source_root".into(), first.uri.clone().into());
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

    /// Write `_meta/gardener.yaml` atomically.
    pub fn save(&self, forest: &Path) -> Result<(), GardenError> {
        let text = format!("{}\n", yaml::emit_mapping(&self.raw));
        forest_fs::atomic_write(&forest.join(CONFIG_PATH), text.as_bytes())
            .map_err(|e| GardenError::Io(format!("{CONFIG_PATH}: {e}")))
    }
}

/// Resolve a local source uri to a path.
pub fn local_path(uri: &str) -> Option<PathBuf> {
    if let Some(p) = uri.strip_prefix("file://") {
        return Some(PathBuf::from(p));
    }
    if uri.contains("://") {
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
        });
        let text = yaml::emit_mapping(&c.raw);
        assert!(text.contains("extra_key: 1"));
        let again = GardenerConfig::from_mapping(yaml::parse_mapping(&text).unwrap()).unwrap();
        assert_eq!(again.sources.len(), 2);
    }
}
