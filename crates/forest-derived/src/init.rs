//! `forest init`: the dialect skeleton in its own git repository (the
//! Gardener plants into it; tests and benchmarks of every side start from it).

use crate::DerivedError;
use forest_git::GitForest;
use forest_model::node::{today, Node};
use std::path::Path;

/// The dialect's `.gitignore`, exactly.
pub const GITIGNORE: &str = "_derived/\n.vine.lock\n*.db\n*.sqlite\n_assets/\n";

/// The end of the summary `forest init` gives the master, until the first
/// batch derives one from what the forest holds.
const FRESH_MASTER: &str = " forest. Freshly created: no branches or notes yet.";

/// True for the placeholder summary `forest init` writes on the master.
pub fn is_fresh_master_summary(summary: &str) -> bool {
    summary.starts_with("Master branch of the ") && summary.ends_with(FRESH_MASTER)
}

/// Create a forest at `dir`: `.gitignore`, master `_index.md` with the four
/// sections, `_meta/schema.md`, one commit. Refuses an existing forest.
pub fn init_forest(dir: &Path, title: &str) -> crate::Result<GitForest> {
    if dir.join("_index.md").exists() {
        return Err(DerivedError::AlreadyForest { path: dir.display().to_string() });
    }
    let day = today();
    let summary = format!("Master branch of the {title}{FRESH_MASTER}");
    let mut master = Node { front: Default::default(), body: String::new() };
    master.set_str("id", "_index");
    master.set_str("type", "branch");
    master.set_str("title", title);
    master.set_str("summary", &summary);
    master.set_str("coverage", "0 bananas, 0 sub-branches");
    master.set_str("created", &day);
    master.set_str("updated", &day);
    master.body = format!(
        "# {title}\n\n> {summary}\n\n## Sub-branches\n\n## Direct bananas\n\n## Cross trails\n\n## Landmarks\n"
    );
    let files = vec![
        (".gitignore".to_string(), GITIGNORE.as_bytes().to_vec()),
        ("_index.md".to_string(), master.to_text().into_bytes()),
        ("_meta/schema.md".to_string(), forest_model::schema::default_schema_md(&day).into_bytes()),
    ];
    Ok(GitForest::init(dir, &format!("init: forest '{title}' (empty A.5 skeleton)"), &files)?)
}
