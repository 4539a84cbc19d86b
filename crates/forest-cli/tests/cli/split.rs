//! Navigable branches (issue 14): a big source folder is split into
//! name-prefix buckets that stay under the dialect's `needs_split` limits;
//! the first crossing is one transplant (aliases, links and heat follow),
//! growth after it moves nobody. Checked end to end with the binary:
//! `validate`, `health`, `look` digests, `heat`, and the reference engine's
//! `vine validate` and `vine sync` when `FOREST_TEST_MONKEYLLM` is set.

use super::snapshot::{ok, reference_bin, vine};
use super::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const WORDS: [&str; 12] = [
    "alpha",
    "budget",
    "contract",
    "delivery",
    "estimate",
    "forecast",
    "guideline",
    "handover",
    "invoice",
    "journal",
    "kickoff",
    "ledger",
];

/// `n` files named `<word>-<NNNN>.md` with a sentence or two of body
/// (`long`: the summaries are near the 60-token ceiling).
fn write_files(dir: &Path, range: std::ops::Range<usize>, long: bool) {
    fs::create_dir_all(dir).unwrap();
    for i in range {
        let w = WORDS[i % WORDS.len()];
        let body = if long {
            format!(
                "# {w} {i:04}\n\nThe {w} record number {i} for the northern region lists owners, amounts and deadlines agreed in the weekly review, with the open questions carried to the next meeting.\n"
            )
        } else {
            format!("# Memo {i:04}\n\nShort memo {i}.\n")
        };
        fs::write(dir.join(format!("{w}-{i:04}.md")), body).unwrap();
    }
}

fn json_of(o: &Output, what: &str) -> Value {
    assert!(o.status.success() || code(o) == 3, "{what}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&o.stdout)))
}

/// Every node file of the forest (id -> parsed node), `_meta` excluded.
fn nodes(root: &Path) -> BTreeMap<String, forest_model::node::Node> {
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).into_iter().filter_entry(|e| {
        let n = e.file_name().to_string_lossy();
        !(e.depth() == 1 && (n == "_derived" || n == ".git" || n == "_meta"))
    }) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if let Some(id) = rel.strip_suffix(".md") {
            let text = fs::read_to_string(e.path()).unwrap();
            out.insert(id.to_string(), forest_model::node::Node::parse(&text).unwrap());
        }
    }
    out
}

/// The dialect's estimator over the JSON as the reference serialises it
/// (Python's `", "` / `": "` separators).
fn json_tokens(v: &Value) -> usize {
    fn spaced(v: &Value, out: &mut String) {
        match v {
            Value::Array(a) => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    spaced(x, out);
                }
                out.push(']');
            }
            Value::Object(m) => {
                out.push('{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push_str(": ");
                    spaced(x, out);
                }
                out.push('}');
            }
            x => out.push_str(&x.to_string()),
        }
    }
    let mut s = String::new();
    spaced(v, &mut s);
    forest_model::tokens::estimate_tokens(&s)
}

/// The navigability checks every split forest must pass (`folder` empty:
/// the whole source): branch limits,
/// `validate` clean, `health` without `needs_split`, every passport with
/// its `source_path`, every branch digest within `look`'s budget.
pub(super) fn assert_navigable(root: &Path, folder: &str, files: usize) {
    let all = nodes(root);
    let mut paths = BTreeSet::new();
    let mut widest = 0;
    for (id, n) in &all {
        if forest_model::ids::is_branch_id(id) {
            let entries = n.body.lines().filter(|l| l.starts_with("- [[")).count();
            let tokens = forest_model::tokens::estimate_tokens(&n.body);
            assert!(entries <= 150 && tokens <= 3000, "{id}: {entries} entries, {tokens} tokens");
            widest = widest.max(entries);
        } else if let Some(p) =
            n.get_str("source_path").filter(|p| folder.is_empty() || p.starts_with(&format!("{folder}/")))
        {
            assert!(folder.is_empty() || id.starts_with(&format!("{folder}/")), "{id}: source_path {p}");
            paths.insert(p);
        }
    }
    assert_eq!(paths.len(), files, "every file keeps exactly one passport with its source_path");
    let o = run(&["validate", "--forest", &f(root)]);
    assert_eq!(code(&o), 0, "validate: {}", String::from_utf8_lossy(&o.stdout));
    assert!(String::from_utf8_lossy(&o.stdout).contains("0 error(s)"));
    let h = json_of(&run(&["health", "--forest", &f(root), "--json"]), "health");
    assert_eq!(h["needs_split"], serde_json::json!([]), "{h}");
    let branches: Vec<&String> = all.keys().filter(|id| forest_model::ids::is_branch_id(id)).collect();
    let mut truncated = 0;
    for id in &branches {
        let d = json_of(&run(&["look", "--forest", root.to_str().unwrap(), "--json", id]), "look");
        assert_eq!(d["id"].as_str(), Some(id.as_str()), "{d}");
        let t = json_tokens(&d);
        assert!(t <= 500, "{id}: digest of {t} tokens");
        truncated += usize::from(d["truncated"] == true);
    }
    println!("{folder}: {} branches (widest {widest} entries), {truncated} digests cut to the budget", branches.len());
}

/// The reference engine reads a split forest without errors, and its sync,
/// which maps sources by `source_path`, finds every re-homed passport and
/// plants or rewrites nothing (when `FOREST_TEST_MONKEYLLM` is set).
pub(super) fn reference_reads_it(root: &Path, test: &str) {
    let Some(bin) = reference_bin(test) else { return };
    let o = vine(&bin, &["validate", "--forest", root.to_str().unwrap()]);
    ok(&o, "vine validate");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("0 error(s)"), "{out}");
    let head = git(root, &["rev-parse", "HEAD"]);
    let o = vine(&bin, &["sync", "--forest", root.to_str().unwrap()]);
    ok(&o, "vine sync");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("planted (") && !out.contains("updated ("), "vine sync: {out}");
    assert_eq!(git(root, &["rev-parse", "HEAD"]), head, "vine sync: {out}");
}

#[test]
fn adopt_of_a_400_file_folder_is_split_into_navigable_buckets() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    write_files(&src.join("reports"), 0..400, true);
    let r = json_of(&run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]), "adopt");
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    assert_eq!(r["sources"][0]["planted"].as_array().unwrap().len(), 400);
    // Planted straight into their buckets: nothing committed had to move.
    assert_eq!(r["sources"][0]["moved"], serde_json::json!([]));
    // One level of name-range buckets (`reports/~alpha-0000..contract-0098/`).
    let all = nodes(&root);
    for (id, _) in all.iter().filter(|(id, _)| !forest_model::ids::is_branch_id(id)) {
        let parts: Vec<&str> = id.split('/').collect();
        assert!(parts.len() == 3 && parts[1].starts_with('~') && parts[1].contains(".."), "{id}");
    }
    let top = fs::read_to_string(root.join("reports/_index.md")).unwrap();
    let buckets = top.lines().filter(|l| l.starts_with("- [[reports/~")).count();
    // ~21 long entry lines fill half a bucket's token budget: ~19 ranges.
    assert!((3..=30).contains(&buckets), "{top}");
    assert_navigable(&root, "reports", 400);
    fsck(&root);
}

#[test]
fn crossing_the_threshold_moves_once_then_growth_moves_nobody() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    write_files(&src.join("notes"), 0..120, false);
    write_files(&src.join("other"), 0..1, false);
    ok(&run(&["adopt", "--forest", &f(&root), src.to_str().unwrap()]), "adopt");
    let before = nodes(&root);
    let leaf_ids: Vec<String> =
        before.keys().filter(|id| id.starts_with("notes/") && !id.ends_with("_index")).cloned().collect();
    assert_eq!(leaf_ids.len(), 120);
    assert!(leaf_ids.iter().all(|id| id.matches('/').count() == 1), "120 short files fit one branch");
    // A hand-written link from another node, and heat on the target.
    let target = "notes/contract-0002";
    let other = root.join("other/alpha-0000.md");
    let text = fs::read_to_string(&other).unwrap();
    let text = text.replacen(
        "\nsource: ingest\n",
        &format!("\nsource: ingest\nlinks:\n- rel: related-to\n  target: {target}\n"),
        1,
    );
    fs::write(&other, text).unwrap();
    git(&root, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "hand: link"]);
    ok(&run(&["heat", "deposit", "--forest", &f(&root), target, "--amount", "0.5"]), "heat deposit");

    // 120 -> 200: the folder crosses 150 entries and is split once.
    write_files(&src.join("notes"), 120..200, false);
    let r = json_of(&run(&["sync", "--forest", &f(&root), "--json"]), "sync");
    let s = &r["sources"][0];
    let moved: BTreeMap<String, String> = s["moved"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["from"].as_str().unwrap().to_string(), m["to"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(moved.keys().cloned().collect::<Vec<_>>(), leaf_ids, "every committed leaf moved exactly once");
    assert_eq!(s["planted"].as_array().unwrap().len(), 80);
    assert_eq!(r["commits"].as_array().unwrap().len(), 1, "one commit for the batch");
    let after = nodes(&root);
    let new_target = &moved[target];
    assert!(new_target.starts_with("notes/~"), "{new_target}");
    let moved_node = &after[new_target];
    assert!(moved_node.get_list("aliases").contains(&target.to_string()));
    assert_eq!(moved_node.get_list("moved_from"), vec![target.to_string()]);
    assert_eq!(moved_node.get_str("source_path").as_deref(), Some("notes/contract-0002.md"));
    assert!(!root.join(format!("{target}.md")).exists());
    // The old id resolves to the new one.
    let o = run(&["look", "--forest", &f(&root), "--json", target]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["error"]["code"], "E_MOVED", "{v}");
    assert_eq!(v["error"]["moved_to"].as_str(), Some(new_target.as_str()), "{v}");
    // The link and the heat followed.
    let linked = after["other/alpha-0000"].links();
    assert_eq!(linked.iter().map(|l| l.target.as_str()).collect::<Vec<_>>(), vec![new_target.as_str()]);
    let heat = json_of(&run(&["heat", "show", "--forest", &f(&root), "--json"]), "heat show");
    let rows: BTreeMap<String, f64> = heat["hottest"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_string(), r["heat"].as_f64().unwrap()))
        .collect();
    assert!(rows.get(new_target).is_some_and(|h| *h >= 0.49), "{heat}");
    assert!(!rows.contains_key(target), "{heat}");
    assert_navigable(&root, "notes", 200);

    // +10%: nothing that exists moves.
    write_files(&src.join("notes"), 200..220, false);
    let ids_before: BTreeSet<String> = nodes(&root).keys().cloned().collect();
    let r = json_of(&run(&["sync", "--forest", &f(&root), "--json"]), "sync +10%");
    assert_eq!(r["sources"][0]["moved"], serde_json::json!([]), "{r}");
    assert_eq!(r["sources"][0]["planted"].as_array().unwrap().len(), 20);
    let ids_after: BTreeSet<String> = nodes(&root).keys().cloned().collect();
    assert!(ids_before.is_subset(&ids_after), "no existing node moved");
    assert_navigable(&root, "notes", 220);

    // Growth that piles into one bucket (numbered names entering a new
    // range: `alpha-5000…` all route to the first range, which holds ~60
    // leaves):
    // the bucket splits, its committed leaves stay, only new ones go on.
    let now = nodes(&root);
    let first = now.keys().filter(|id| id.starts_with("notes/~")).min().unwrap().clone();
    let first = forest_model::ids::folder_of(&first).to_string();
    let a_before: Vec<String> =
        now.keys().filter(|id| id.starts_with(&format!("{first}/")) && !id.ends_with("_index")).cloned().collect();
    assert!(a_before.len() > 10 && a_before.iter().any(|id| id.contains("/alpha-")), "{a_before:?}");
    for i in 5000..5150 {
        fs::write(src.join(format!("notes/alpha-{i}.md")), format!("# Alpha {i}\n\nGrowth memo {i}.\n")).unwrap();
    }
    let r = json_of(&run(&["sync", "--forest", &f(&root), "--json"]), "sync: 150 into one bucket");
    assert_eq!(r["sources"][0]["moved"], serde_json::json!([]), "{r}");
    assert_eq!(r["sources"][0]["planted"].as_array().unwrap().len(), 150);
    let after = nodes(&root);
    assert!(a_before.iter().all(|id| after.contains_key(id)), "the bucket's committed leaves stay");
    assert_navigable(&root, "notes", 370);
    fsck(&root);

    reference_reads_it(&root, "crossing_the_threshold_moves_once_then_growth_moves_nobody");
}

#[test]
fn a_source_of_160_folders_is_bucketed_at_adopt_and_new_folders_move_nobody() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    let depts = ["eng", "fin", "hr", "legal", "ops", "qa", "sales", "sec"];
    for i in 0..160 {
        write_files(&src.join(format!("{}-{i:03}", depts[i % depts.len()])), i..i + 2, false);
    }
    write_files(&src, 0..3, false);
    let r = json_of(&run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]), "adopt");
    let s = &r["sources"][0];
    assert_eq!(s["planted"].as_array().unwrap().len(), 323, "{r}");
    assert_eq!(s["moved"], serde_json::json!([]), "decided from the listing: nothing moved");
    let master = fs::read_to_string(root.join("_index.md")).unwrap();
    let entries = master.lines().filter(|l| l.starts_with("- [[")).count();
    assert!(entries <= 20, "the master lists a few buckets, not 160 folders: {master}");
    // One level of name ranges: `~eng-000..fin-0038/eng-000/`.
    let all = nodes(&root);
    let eng = all.keys().find(|id| id.ends_with("/eng-000/_index")).expect("eng-000").clone();
    assert_eq!(eng.split('/').count(), 3, "{eng}");
    let bucket = forest_model::ids::parent_index(&eng).unwrap();
    assert!(master.contains(&format!("[[{bucket}]]")), "{master}");
    let sec = all.keys().find(|id| id.ends_with("/sec-007/handover-0007")).expect("sec-007");
    assert_eq!(sec.split('/').count(), 3, "{sec}");
    let text = fs::read_to_string(root.join(format!("{bucket}.md"))).unwrap();
    assert!(text.contains("summary: 'Names e to "), "{text}");
    assert_navigable(&root, "", 323);

    // A new folder lands in its bucket, an existing one keeps its place.
    let ids_before: BTreeSet<String> = nodes(&root).keys().cloned().collect();
    write_files(&src.join("eng-999"), 0..2, false);
    write_files(&src.join("eng-000"), 500..501, false);
    let r = json_of(&run(&["sync", "--forest", &f(&root), "--json"]), "sync");
    let s = &r["sources"][0];
    assert_eq!(s["moved"], serde_json::json!([]), "{r}");
    assert_eq!(s["planted"].as_array().unwrap().len(), 3, "{r}");
    let after = nodes(&root);
    let eng999 = after.keys().find(|id| id.ends_with("/eng-999/_index")).expect("eng-999");
    assert_eq!(eng999.split('/').count(), 3, "{eng999}");
    let eng_dir = forest_model::ids::folder_of(&eng);
    assert!(root.join(format!("{eng_dir}/invoice-0500.md")).exists());
    let ids_after: BTreeSet<String> = nodes(&root).keys().cloned().collect();
    assert!(ids_before.is_subset(&ids_after), "no existing node moved");
    assert_navigable(&root, "", 326);
    fsck(&root);

    reference_reads_it(&root, "a_source_of_160_folders_is_bucketed_at_adopt_and_new_folders_move_nobody");
}
