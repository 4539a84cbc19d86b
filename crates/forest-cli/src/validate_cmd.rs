//! `forest validate`: the lint report of forest-model plus the rules that
//! need the forest's recorded sources: a `content: reference` node whose
//! source file maps outside its own folder (`engineering/x` reading
//! `hr/salary1.md`) is an error, since a token scoped to the node's branch
//! would be served a file of another branch (the read side refuses it).

use std::path::Path;

use forest_derived::config::GardenerConfig;
use forest_model::lint::{lint_forest_fold, Issue, Level, LintReport};
use forest_model::node::Node;
use forest_model::scope::reference_in_scope;

use crate::cli::{forest_root, print_json, ForestArg, EXIT_ERROR};
use anyhow::Result;

/// The finding of one node whose reference leaves its scope, if any.
fn cross_scope(config: Option<&GardenerConfig>, id: &str, node: &Node) -> Option<Issue> {
    if node.get_str("content").as_deref() != Some("reference") {
        return None;
    }
    let sp = node.get_str("source_path")?;
    let home = config?.source_home(node.get_str("source_name").as_deref(), &sp)?;
    if reference_in_scope(id, &home) {
        return None;
    }
    let place = if home.is_empty() { "the forest root".to_string() } else { format!("'{home}/'") };
    Some(Issue {
        id: id.to_string(),
        level: Level::Error,
        message: format!(
            "reference source_path '{sp}' maps to {place}, outside this node's folder: a token scoped here would read another branch (never served to one)"
        ),
    })
}

/// Lint the forest in one pass and add the cross-scope references.
pub(crate) fn report(root: &Path) -> LintReport {
    let config = GardenerConfig::load(root).ok();
    let (mut report, found) = lint_forest_fold(
        root,
        Vec::new,
        |mut acc: Vec<Issue>, id, node| {
            acc.extend(cross_scope(config.as_ref(), id, node));
            acc
        },
        |mut a, b| {
            a.extend(b);
            a
        },
    );
    if !found.is_empty() {
        report.errors += found.len();
        report.issues.extend(found);
        report.issues.sort_by(|a, b| a.id.cmp(&b.id));
    }
    report
}

/// `forest validate`.
pub(crate) fn run(f: &ForestArg, json: bool, deny_warnings: bool) -> Result<u8> {
    let root = forest_root(f)?;
    let report = report(&root);
    if json {
        print_json(&report)?;
    } else {
        for i in &report.issues {
            println!("{i}");
        }
        println!("{} error(s), {} warning(s)", report.errors, report.warnings);
    }
    Ok(if report.errors > 0 || (deny_warnings && report.warnings > 0) { EXIT_ERROR } else { 0 })
}
