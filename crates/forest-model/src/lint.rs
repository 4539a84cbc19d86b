//! The validator (`forest validate`): every lint rule of dialect §2.6 plus
//! ours (alias bounds, tag format, ids differing only by case,
//! `source_hash` format).

use crate::ids;
use crate::node::{body_blockquote, body_h1, wikilinks, Node};
use crate::scent::validate_summary;
use crate::schema::{Dialect, ENTITY_KINDS, MAX_LINKS, PAYLOAD_TYPES, SOURCES};
use crate::walk::node_paths_and_links;
use crate::yaml::{Mapping, Value};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Severity of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Breaks the contract.
    Error,
    /// Worth fixing.
    Warning,
}

/// One finding: `[level] id: message`.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Issue {
    /// Node id.
    pub id: String,
    /// Severity.
    pub level: Level,
    /// Human message.
    pub message: String,
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let l = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        write!(f, "[{l}] {}: {}", self.id, self.message)
    }
}

/// The `forest validate --json` report.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct LintReport {
    /// Report shape version.
    pub version: u32,
    /// Number of node files seen.
    pub nodes: usize,
    /// Error count.
    pub errors: usize,
    /// Warning count.
    pub warnings: usize,
    /// Findings sorted by id.
    pub issues: Vec<Issue>,
}

/// Lint a whole forest. Nodes are read, parsed and checked in parallel and
/// dropped right after: memory holds the id set, not the bodies.
pub fn lint_forest(root: &Path) -> LintReport {
    lint_forest_fold(root, || (), |(), _, _| (), |(), ()| ()).0
}

/// [`lint_forest`] plus a caller's aggregate over the same single read of
/// every node: `fold` sees each non-`_meta` node that parsed (id, node),
/// per-thread accumulators start from `identity` and are combined with
/// `merge`. Lets a report that needs per-node facts (health) skip a
/// second pass over the files.
pub fn lint_forest_fold<A, I, F, M>(root: &Path, identity: I, fold: F, merge: M) -> (LintReport, A)
where
    A: Send,
    I: Fn() -> A + Sync + Send,
    F: Fn(A, &str, &Node) -> A + Sync + Send,
    M: Fn(A, A) -> A + Sync + Send,
{
    let (paths, links) = node_paths_and_links(root);
    // Ids borrow from the paths: one copy of 10^6 names, not two.
    let all_ids: Vec<&str> = paths.iter().map(|rel| rel.strip_suffix(".md").unwrap_or(rel)).collect();
    let dialect = forest_dialect(root);
    let ids: HashSet<&str> = all_ids.iter().copied().collect();
    let (issues, agg) = all_ids
        .par_iter()
        .zip(paths.par_iter())
        .fold(
            || (Vec::new(), identity()),
            |(mut issues, acc): (Vec<Issue>, A), (id, rel)| {
                let node = read_node(&root.join(rel));
                issues.extend(check_node(root, id, &node, &dialect).resolve(id, &ids));
                let acc = match &node {
                    Ok(n) if !ids::is_meta(id) => fold(acc, id, n),
                    _ => acc,
                };
                (issues, acc)
            },
        )
        .reduce(
            || (Vec::new(), identity()),
            |(mut a, x), (b, y)| {
                a.extend(b);
                (a, merge(x, y))
            },
        );
    let mut issues = issues;
    issues.extend(links.iter().map(|l| symlink_issue(root, l)));
    (finish(issues, &all_ids, &ids), agg)
}

/// The finding of a symlink in the forest: never served (the read side
/// refuses what leads outside the forest), so an error when it leaves.
/// A symlink into another folder (`engineering/x.md -> ../hr/y.md`) is an
/// error too: a token scoped to the link's branch must never read there.
pub(crate) fn symlink_issue(root: &Path, rel: &str) -> Issue {
    let target = match (std::fs::canonicalize(root), std::fs::canonicalize(root.join(rel))) {
        (Ok(r), Ok(t)) => t.strip_prefix(&r).ok().map(|t| t.to_string_lossy().replace('\\', "/")),
        _ => None,
    };
    let id = rel.strip_suffix(".md").unwrap_or(rel).to_string();
    let link_folder = rel.rsplit_once('/').map_or("", |(f, _)| f);
    // A directory link exposes its target itself; a file link, its folder.
    let is_dir = root.join(rel).is_dir();
    let target_folder = target.as_deref().map(|t| if is_dir { t } else { t.rsplit_once('/').map_or("", |(f, _)| f) });
    if let Some(tf) = target_folder.filter(|tf| !crate::scope::within(tf, link_folder)) {
        let place = if tf.is_empty() { "the forest root".to_string() } else { format!("'{tf}/'") };
        let message = format!(
            "is a symlink into another branch ({place}): a token scoped to this branch would read there; replace it with the file"
        );
        Issue { id, level: Level::Error, message }
    } else if target.is_some() {
        Issue { id, level: Level::Warning, message: "is a symlink: not listed as a node; copy the file instead".into() }
    } else {
        Issue {
            id,
            level: Level::Error,
            message: "is a symlink that leaves the forest (or dangles): never served; replace it with the file".into(),
        }
    }
}

/// Why a node file could not be checked: printed, it is the node's only
/// lint finding (the cause is part of that one line, so it is not also
/// chained as a source).
#[derive(Debug, thiserror::Error)]
pub enum NodeFileError {
    /// The file could not be read.
    #[error("unreadable: {0}")]
    Unreadable(std::io::Error),
    /// The bytes are not UTF-8.
    #[error("file is not valid UTF-8")]
    NotUtf8,
    /// The frontmatter or its fences are broken.
    #[error("{0}")]
    Parse(crate::node::ParseError),
}

/// Read and parse one node file.
pub(crate) fn read_node(path: &Path) -> Result<Node, NodeFileError> {
    let b = std::fs::read(path).map_err(NodeFileError::Unreadable)?;
    let text = String::from_utf8(b).map_err(|_| NodeFileError::NotUtf8)?;
    Node::parse(&text).map_err(NodeFileError::Parse)
}

/// The dialect a forest declares in `_meta/schema.md` (default when absent).
pub(crate) fn forest_dialect(root: &Path) -> Dialect {
    std::fs::read_to_string(root.join("_meta/schema.md"))
        .ok()
        .and_then(|t| Node::parse(&t).ok())
        .map(|n| Dialect::from_schema_body(&n.body))
        .unwrap_or_default()
}

/// Add the forest-wide findings (ids differing only by case) and count.
pub(crate) fn finish(mut issues: Vec<Issue>, all_ids: &[&str], ids: &HashSet<&str>) -> LintReport {
    // Ours: ids that differ only by case collide on case-insensitive
    // filesystems. Two distinct ids that lowercase to themselves never
    // collide, so groups are keyed by the ids that change when lowercased
    // (usually none) plus the id they fold to, if it exists.
    let mut by_lower: HashMap<String, Vec<&str>> = HashMap::new();
    for id in all_ids.iter().filter(|i| i.chars().any(|c| c.to_lowercase().ne(std::iter::once(c)))) {
        by_lower.entry(id.to_lowercase()).or_default().push(id);
    }
    for (lower, group) in by_lower.iter_mut() {
        if let Some(plain) = ids.get(lower.as_str()) {
            group.push(plain);
        }
        group.sort();
    }
    for group in by_lower.values().filter(|g| g.len() > 1) {
        for id in group {
            issues.push(Issue {
                id: id.to_string(),
                level: Level::Warning,
                message: format!(
                    "id differs only by case from: {}",
                    group.iter().filter(|g| *g != id).cloned().collect::<Vec<_>>().join(", ")
                ),
            });
        }
    }
    // Stable: per-node issue order stays as check_node wrote it.
    issues.sort_by(|a, b| a.id.cmp(&b.id));
    let errors = issues.iter().filter(|i| i.level == Level::Error).count();
    LintReport { version: 1, nodes: all_ids.len(), errors, warnings: issues.len() - errors, issues }
}

/// One node's findings that do not depend on the other nodes, in report
/// order around the two target lists that are checked against the id set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct NodeCheck {
    /// Findings before the link checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) head: Vec<(Level, String)>,
    /// Frontmatter link targets (a missing one is an error).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) links: Vec<String>,
    /// Body wikilink targets (a missing one is a warning).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) wikilinks: Vec<String>,
    /// Findings after the link checks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) tail: Vec<(Level, String)>,
    /// Forest-relative path of the local payload file the tail read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) payload: Option<String>,
}

impl NodeCheck {
    /// The node's issues given the forest's id set.
    pub(crate) fn resolve(&self, id: &str, ids: &HashSet<&str>) -> Vec<Issue> {
        let issue = |(level, m): &(Level, String)| Issue { id: id.into(), level: *level, message: m.clone() };
        let mut out: Vec<Issue> = self.head.iter().map(issue).collect();
        for t in self.links.iter().filter(|t| !ids.contains(t.as_str())) {
            out.push(Issue { id: id.into(), level: Level::Error, message: format!("broken link target: {t}") });
        }
        for w in self.wikilinks.iter().filter(|w| !ids.contains(w.as_str())) {
            out.push(Issue { id: id.into(), level: Level::Warning, message: format!("broken wikilink: [[{w}]]") });
        }
        out.extend(self.tail.iter().map(issue));
        out
    }
}

fn err(m: impl Into<String>) -> (Level, String) {
    (Level::Error, m.into())
}
fn warn(m: impl Into<String>) -> (Level, String) {
    (Level::Warning, m.into())
}

/// A branch with the fields the dialect lets it leave out filled in: title
/// (body H1, else the id), summary (first blockquote), created (updated).
fn branch_defaults(node: &Node, id: &str) -> Node {
    let mut node = node.clone();
    if !node.front.contains_key("title") {
        let t = body_h1(&node.body).unwrap_or_else(|| id.to_string());
        node.set_str("title", &t);
    }
    if !node.front.contains_key("summary") {
        let s = body_blockquote(&node.body).unwrap_or_default();
        node.set_str("summary", &s);
    }
    if !node.front.contains_key("created") {
        if let Some(u) = node.front.get("updated").cloned() {
            node.set("created", u);
        }
    }
    node
}

/// Everything lint checks on one node by itself (`node` is the parse
/// result; an error becomes the node's only finding). Changing a rule
/// here means bumping `lint_cache::RULES`.
pub(crate) fn check_node(root: &Path, id: &str, node: &Result<Node, NodeFileError>, dialect: &Dialect) -> NodeCheck {
    let mut out = NodeCheck::default();
    let node = match node {
        Ok(n) => n,
        Err(e) => {
            out.head.push(err(e.to_string()));
            return out;
        }
    };
    if ids::is_meta(id) {
        return out;
    }
    let is_branch = node.get_str("type").as_deref() == Some("branch") || ids::is_branch_id(id);
    // A branch's missing title, summary and created come from its body and
    // `updated`; only such a branch is copied (a copy of every node was
    // ~20% of this check in a 10^6-node rebuild).
    let filled;
    let node = if is_branch && ["title", "summary", "created"].iter().any(|k| !node.front.contains_key(*k)) {
        filled = branch_defaults(node, id);
        &filled
    } else {
        node
    };
    if let Err(m) = validate_frontmatter(node, dialect) {
        out.head.push(err(m.to_string()));
        return out;
    }
    let fid = node.get_str("id").unwrap_or_default();
    if fid != id {
        out.head.push(err(format!("frontmatter id '{fid}' != canonical id")));
    }
    if let Err(e) = validate_summary(&node.get_str("summary").unwrap_or_default()) {
        out.head.push(warn(format!("summary: {}", e.message())));
    }
    out.links = node.links().into_iter().map(|l| l.target).collect();
    out.wikilinks = wikilinks(&node.body);
    let tail = &mut out.tail;
    if let Some(payload) = node.get_str("payload") {
        // A `git:` origin is the file at a git source's commit (BONE).
        if !is_remote(&payload) && !payload.starts_with("git:") {
            let folder = ids::folder_of(id);
            let path = root.join(folder).join(&payload);
            match std::fs::read(&path) {
                Err(_) => tail.push(err(format!("payload missing: {payload}"))),
                Ok(bytes) => {
                    if let Some(h) = node.get_str("payload_hash") {
                        if hex::encode(Sha256::digest(&bytes)) != h.trim().to_lowercase() {
                            tail.push(warn(format!(
                                "payload drift: sha256 mismatch for {payload} (edited outside tend?)"
                            )));
                        }
                    }
                }
            }
            // Relative to the root when inside it (an absolute one stays).
            out.payload = Some(path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned());
        }
    }
    // Ours.
    let aliases = node.get_list("aliases");
    if aliases.len() > 16 {
        tail.push(warn(format!("aliases: {} items (max 16)", aliases.len())));
    }
    if aliases.iter().any(|a| a.trim().is_empty() || a.chars().count() > 80) {
        tail.push(warn("aliases: every alias must be non-empty and <= 80 chars"));
    }
    for t in node.get_list("tags") {
        if !valid_tag(&t) {
            tail.push(warn(format!("tag '{t}' is not lowercase ASCII (a-z0-9_-)")));
        }
    }
    if let Some(h) = node.get_str("source_hash") {
        if !valid_source_hash(&h) {
            tail.push(err(format!("source_hash '{h}' is neither blake3:<64 hex> nor 64-hex sha256")));
        }
    }
    out
}

/// True for `scheme://…` payloads (validated at fetch time instead).
pub fn is_remote(p: &str) -> bool {
    let Some((scheme, _)) = p.split_once("://") else {
        return false;
    };
    let mut c = scheme.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase())
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || "+.-".contains(x))
}

/// Tag format: lowercase ASCII words (`^[a-z0-9][a-z0-9_-]*$`).
pub fn valid_tag(t: &str) -> bool {
    let mut c = t.chars();
    c.next().is_some_and(|f| f.is_ascii_lowercase() || f.is_ascii_digit())
        && c.all(|x| x.is_ascii_lowercase() || x.is_ascii_digit() || x == '_' || x == '-')
}

/// `blake3:<64 hex>` or a bare 64-hex sha256.
pub fn valid_source_hash(h: &str) -> bool {
    let hexpart = h.strip_prefix("blake3:").unwrap_or(h);
    hexpart.len() == 64 && hexpart.chars().all(|c| c.is_ascii_hexdigit())
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Sequence(_) => "list",
        Value::Mapping(_) => "mapping",
        Value::Tagged(_) => "tagged",
    }
}

fn is_date_like(v: &Value) -> bool {
    match v {
        Value::String(s) => {
            let d: String = s.chars().take(10).collect();
            chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").is_ok()
        }
        _ => false,
    }
}

/// The first problem [`validate_frontmatter`] finds: a dialect code
/// (`E_FRONTMATTER`, `E_SCHEMA`) and what is wrong, printed `CODE: message`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct FrontmatterError {
    code: crate::ErrorCode,
    message: String,
}

impl FrontmatterError {
    fn new(code: crate::ErrorCode, message: impl Into<String>) -> Self {
        FrontmatterError { code, message: message.into() }
    }

    /// The dialect's error code.
    pub fn code(&self) -> crate::ErrorCode {
        self.code
    }

    /// What is wrong, without the code.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Frontmatter validation (non-strict: the summary is checked separately).
/// Returns the first problem as `CODE: message`.
pub fn validate_frontmatter(node: &Node, dialect: &Dialect) -> Result<(), FrontmatterError> {
    let f = &node.front;
    check_required(f)?;
    check_string_lists(f)?;
    check_confidence(f)?;
    check_closed_sets(f)?;
    check_type(node, dialect)?;
    check_links(f, dialect)?;
    check_origin(f)
}

/// The scent and dates every node carries: present, strings or dates.
fn check_required(f: &Mapping) -> Result<(), FrontmatterError> {
    for key in ["id", "type", "title", "summary", "created", "updated"] {
        match f.get(key) {
            None | Some(Value::Null) => {
                return Err(FrontmatterError::new(crate::ErrorCode::Frontmatter, format!("{key}: Field required")))
            }
            Some(v) => {
                if key == "created" || key == "updated" {
                    if !is_date_like(v) {
                        return Err(FrontmatterError::new(
                            crate::ErrorCode::Frontmatter,
                            format!("{key}: Input should be a valid date"),
                        ));
                    }
                } else if !matches!(v, Value::String(_)) {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Frontmatter,
                        format!("{key}: Input should be a valid string, got {}", type_name(v)),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// `tags`, `aliases`, `moved_from`: lists of strings when present.
fn check_string_lists(f: &Mapping) -> Result<(), FrontmatterError> {
    for key in ["tags", "aliases", "moved_from"] {
        if let Some(v) = f.get(key) {
            match v {
                Value::Sequence(s) if s.iter().all(|x| matches!(x, Value::String(_))) => {}
                Value::Null => {}
                _ => {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Frontmatter,
                        format!("{key}: Input should be a list of strings"),
                    ))
                }
            }
        }
    }
    Ok(())
}

/// `confidence`: a number in [0.0, 1.0] when present.
fn check_confidence(f: &Mapping) -> Result<(), FrontmatterError> {
    if let Some(v) = f.get("confidence") {
        match v.as_f64() {
            Some(c) if (0.0..=1.0).contains(&c) => {}
            Some(_) => {
                return Err(FrontmatterError::new(
                    crate::ErrorCode::Frontmatter,
                    "confidence: Value error, confidence must be in [0.0, 1.0]",
                ))
            }
            None => {
                return Err(FrontmatterError::new(
                    crate::ErrorCode::Frontmatter,
                    "confidence: Input should be a valid number",
                ))
            }
        }
    }
    Ok(())
}

/// `source` and `payload_type`: one of their closed sets when present.
fn check_closed_sets(f: &Mapping) -> Result<(), FrontmatterError> {
    for (key, allowed) in [("source", &SOURCES[..]), ("payload_type", &PAYLOAD_TYPES[..])] {
        if let Some(v) = f.get(key) {
            if !matches!(v, Value::Null) && !v.as_str().is_some_and(|s| allowed.contains(&s)) {
                return Err(FrontmatterError::new(
                    crate::ErrorCode::Frontmatter,
                    format!("{key}: must be one of {allowed:?}"),
                ));
            }
        }
    }
    Ok(())
}

/// The type is the dialect's; an entity names its kind.
fn check_type(node: &Node, dialect: &Dialect) -> Result<(), FrontmatterError> {
    let ty = node.get_str("type").unwrap_or_default();
    if !dialect.has_type(&ty) {
        return Err(FrontmatterError::new(crate::ErrorCode::Schema, format!("unknown node type '{ty}'")));
    }
    if ty == "entity" && !node.get_str("entity_kind").is_some_and(|k| ENTITY_KINDS.contains(&k.as_str())) {
        return Err(FrontmatterError::new(
            crate::ErrorCode::Frontmatter,
            format!("entity_kind: must be one of {ENTITY_KINDS:?}"),
        ));
    }
    Ok(())
}

/// `links`: a list (at most `MAX_LINKS`) of mappings with a known rel, a
/// target and an optional confidence in [0.0, 1.0].
fn check_links(f: &Mapping, dialect: &Dialect) -> Result<(), FrontmatterError> {
    match f.get("links") {
        None | Some(Value::Null) => {}
        Some(Value::Sequence(links)) => {
            for l in links {
                let Some(m) = l.as_mapping() else {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Frontmatter,
                        "links: each link must be a mapping with rel and target",
                    ));
                };
                let (Some(rel), Some(target)) =
                    (m.get("rel").and_then(|v| v.as_str()), m.get("target").and_then(|v| v.as_str()))
                else {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Frontmatter,
                        "links: each link needs string rel and target",
                    ));
                };
                if !dialect.has_rel(rel) {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Schema,
                        format!("unknown rel '{rel}' (links -> {target})"),
                    ));
                }
                if let Some(c) = m.get("confidence") {
                    if !c.as_f64().is_some_and(|c| (0.0..=1.0).contains(&c)) {
                        return Err(FrontmatterError::new(
                            crate::ErrorCode::Frontmatter,
                            format!("links: confidence of {rel} -> {target} must be in [0.0, 1.0]"),
                        ));
                    }
                }
            }
            if links.len() > MAX_LINKS {
                return Err(FrontmatterError::new(
                    crate::ErrorCode::Schema,
                    format!("node has {} links (max {MAX_LINKS})", links.len()),
                ));
            }
        }
        Some(_) => {
            return Err(FrontmatterError::new(crate::ErrorCode::Frontmatter, "links: Input should be a valid list"))
        }
    }
    Ok(())
}

/// `origin`: one URI without whitespace or control characters.
fn check_origin(f: &Mapping) -> Result<(), FrontmatterError> {
    if let Some(v) = f.get("origin") {
        match v {
            Value::Null => {}
            Value::String(s) => {
                if s.trim().is_empty() {
                    return Err(FrontmatterError::new(crate::ErrorCode::Schema, "origin must be a non-empty string"));
                }
                if s.chars().count() > 2048 {
                    return Err(FrontmatterError::new(crate::ErrorCode::Schema, "origin exceeds 2048 chars"));
                }
                if s.chars().any(|c| (c as u32) <= 0x20 || c as u32 == 0x7f) {
                    return Err(FrontmatterError::new(
                        crate::ErrorCode::Schema,
                        "origin must be one URI without whitespace or control characters",
                    ));
                }
            }
            _ => return Err(FrontmatterError::new(crate::ErrorCode::Schema, "origin must be a non-empty string")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_into_another_folder_are_errors() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path();
        for dir in ["hr", "engineering/deep"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("hr/salary.md"), "x").unwrap();
        std::fs::write(root.join("engineering/build.md"), "x").unwrap();
        let link = |target: &str, at: &str| std::os::unix::fs::symlink(target, root.join(at)).unwrap();
        link("../hr/salary.md", "engineering/hrlink.md");
        link("../hr", "engineering/people");
        link("../build.md", "engineering/deep/up.md");
        link("build.md", "engineering/same.md");
        let level = |rel: &str| symlink_issue(root, rel).level;
        assert_eq!(level("engineering/hrlink.md"), Level::Error);
        assert_eq!(level("engineering/people"), Level::Error);
        assert_eq!(level("engineering/deep/up.md"), Level::Error, "up into the parent branch");
        assert_eq!(level("engineering/same.md"), Level::Warning, "beside itself");
        assert!(symlink_issue(root, "engineering/hrlink.md").message.contains("'hr/'"));
    }

    #[test]
    fn frontmatter_rules() {
        let d = Dialect::default();
        let base = "---\nid: a\ntype: note\ntitle: A\nsummary: S.\ncreated: '2026-01-01'\nupdated: '2026-01-01'\n";
        let ok = Node::parse(&format!("{base}---\n")).unwrap();
        assert!(validate_frontmatter(&ok, &d).is_ok());
        let n = Node::parse(&format!("{base}confidence: 1.5\n---\n")).unwrap();
        assert!(validate_frontmatter(&n, &d).unwrap_err().to_string().contains("confidence must be in"));
        let n = Node::parse("---\nid: a\ntype: note\ntitle: A\nsummary: S\nupdated: '2026-01-01'\n---\n").unwrap();
        assert_eq!(validate_frontmatter(&n, &d).unwrap_err().to_string(), "E_FRONTMATTER: created: Field required");
        let n = Node::parse(&format!("{base}links:\n- rel: likes\n  target: b\n---\n")).unwrap();
        assert_eq!(validate_frontmatter(&n, &d).unwrap_err().to_string(), "E_SCHEMA: unknown rel 'likes' (links -> b)");
        let n = Node::parse(&format!("{}---\n", base.replace("type: note", "type: entity"))).unwrap();
        assert!(validate_frontmatter(&n, &d).unwrap_err().to_string().contains("entity_kind"));
        assert!(valid_source_hash(&format!("blake3:{}", "a".repeat(64))));
        assert!(!valid_source_hash("blake3:zz"));
        assert!(is_remote("s3://b/k") && !is_remote("a.db"));
        assert!(valid_tag("q1-2026") && !valid_tag("Sales"));
    }
}
