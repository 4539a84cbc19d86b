//! Integration tests of the Ranger (dialect §11 test_ranger.py and ours),
//! on a synthetic clock.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use forest_catalog::Trails;
use forest_derived::catalog::{open_catalog, reindex, TRAILS_PATH};
use forest_derived::init::{init_forest, GITIGNORE};
use forest_git::{Change, GitForest, WriterLock};
use forest_model::index::{section_entries, LANDMARKS};
use forest_model::node::{today, Node};
use forest_model::scent::summary_fingerprint;
use forest_ranger::*;
use proptest::prelude::*;

const DAY: f64 = 86_400.0;
/// 2026-01-01T00:00:00Z.
const T0: f64 = 1_767_225_600.0;

type L<'a> = (&'a str, &'a str, Option<f64>);

fn leaf(id: &str, links: &[L<'_>]) -> String {
    let mut n = Node { front: Default::default(), body: format!("# Node {id}\n\nBody of {id}.\n") };
    n.set_str("id", id);
    n.set_str("type", "note");
    n.set_str("title", &format!("Node {id}"));
    n.set_str("summary", &format!("Summary of node {id}."));
    n.set_str("created", "2026-01-01");
    n.set_str("updated", "2026-01-01");
    if !links.is_empty() {
        let seq = links
            .iter()
            .map(|(rel, target, c)| {
                let mut m = forest_model::yaml::Mapping::new();
                m.insert("rel".into(), (*rel).into());
                m.insert("target".into(), (*target).into());
                if let Some(c) = c {
                    m.insert("confidence".into(), (*c).into());
                }
                forest_model::yaml::Value::Mapping(m)
            })
            .collect();
        n.set("links", forest_model::yaml::Value::Sequence(seq));
    }
    n.to_text()
}

fn write(id: &str, text: String) -> Change {
    Change::Write { path: format!("{id}.md"), bytes: text.into_bytes() }
}

/// A forest with: hot pair a->b (0.5), cool c->d (0.3), warm e->f (0.3),
/// structural g->h (no confidence) and g->h (1.0 via `part-of`), lonely z.
fn synthetic() -> (tempfile::TempDir, PathBuf, GitForest) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let git = init_forest(&root, "Test").unwrap();
    let changes = vec![
        write("n/a", leaf("n/a", &[("discovered-shortcut", "n/b", Some(0.5))])),
        write("n/b", leaf("n/b", &[])),
        write("n/c", leaf("n/c", &[("related-to", "n/d", Some(0.3))])),
        write("n/d", leaf("n/d", &[])),
        write("n/e", leaf("n/e", &[("related-to", "n/f", Some(0.3))])),
        write("n/f", leaf("n/f", &[])),
        write("n/g", leaf("n/g", &[("related-to", "n/h", None), ("part-of", "n/h", Some(1.0))])),
        write("n/h", leaf("n/h", &[])),
        write("n/z", leaf("n/z", &[])),
    ];
    git.commit_batch(&changes, "test: nodes").unwrap();
    reindex(&root).unwrap();
    (dir, root, git)
}

fn trails(root: &Path) -> Trails {
    Trails::open(&root.join(TRAILS_PATH)).unwrap()
}

fn deposit(root: &Path, ids: &[&str], amount: f64, scope: &str, at: f64) {
    let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    trails(root).deposit_at(&ids, amount, scope, at).unwrap();
}

fn heat_of(root: &Path, id: &str) -> Option<(f64, f64)> {
    trails(root).persistent_rows().unwrap().into_iter().find(|r| r.0 == id).map(|r| (r.1, r.2))
}

fn run_at(root: &Path, git: &GitForest, now: f64) -> RangerReport {
    run(root, git, now, &RangerConfig::default()).unwrap()
}

fn node(root: &Path, id: &str) -> Node {
    Node::parse(&std::fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap()
}

fn git_out(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git").arg("-C").arg(root).args(args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn head_message(root: &Path) -> String {
    git_out(root, &["log", "-1", "--format=%B"])
}

fn commit_count(root: &Path) -> usize {
    git_out(root, &["rev-list", "--count", "HEAD"]).trim().parse().unwrap()
}

fn assert_fsck_clean(root: &Path) {
    let out = Command::new("git").arg("-C").arg(root).args(["fsck", "--strict", "--no-dangling"]).output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty(),
        "fsck: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// ---------------------------------------------------------------- evaporation

#[test]
fn evaporation_halves_removes_dust_and_is_idempotent() {
    let (_d, root, git) = synthetic();
    deposit(&root, &["n/z"], 0.8, "", T0);
    deposit(&root, &["n/h"], 0.05, "", T0);
    let r = run_at(&root, &git, T0 + 30.0 * DAY);
    let (h, stamp) = heat_of(&root, "n/z").unwrap();
    assert!((h - 0.4).abs() < 1e-9, "one half-life halves 0.8 -> {h}");
    assert_eq!(stamp, T0 + 30.0 * DAY, "re-stamped with the decay instant");
    assert_eq!(r.evaporation.decayed, 2);
    // Same instant again: no-op.
    let again = run_at(&root, &git, T0 + 30.0 * DAY);
    assert_eq!((again.evaporation.decayed, again.evaporation.removed), (0, 0));
    assert_eq!(heat_of(&root, "n/z").unwrap().0, h);
    // 4 half-lives of 0.05 -> 0.003 < 0.01: row removed.
    let r = run_at(&root, &git, T0 + 120.0 * DAY);
    assert!(heat_of(&root, "n/h").is_none());
    assert_eq!(r.evaporation.removed, 1);
    assert_eq!(r.health.heat.rows, 1, "only n/z left");
}

#[test]
fn stale_session_rows_are_cleared() {
    let (_d, root, git) = synthetic();
    deposit(&root, &["n/a"], 0.2, "hunt-old", T0 - 25.0 * 3600.0);
    deposit(&root, &["n/b"], 0.2, "hunt-new", T0 - 23.0 * 3600.0);
    let r = run_at(&root, &git, T0);
    assert_eq!(r.evaporation.stale_sessions_cleared, 1);
    let t = trails(&root);
    assert_eq!(t.heat_map(&["n/a".into()], Some("hunt-old")).unwrap()["n/a"], 0.0);
    assert_eq!(t.heat_map(&["n/b".into()], Some("hunt-new")).unwrap()["n/b"], 0.1);
}

// ---------------------------------------------------------------- lifecycle

#[test]
fn lifecycle_promotes_hot_leaves_warm_prunes_cold() {
    let (_d, root, git) = synthetic();
    deposit(&root, &["n/a", "n/b"], 0.4, "", T0);
    deposit(&root, &["n/c", "n/d"], 0.15, "", T0);
    deposit(&root, &["n/e", "n/f"], 0.1, "", T0);
    let before = commit_count(&root);
    let g_before = std::fs::read(root.join("n/g.md")).unwrap();

    let r = run_at(&root, &git, T0);
    assert_eq!(r.links.promoted, vec!["n/a discovered-shortcut->n/b"]);
    assert!(r.links.pruned.is_empty(), "warm and cool links left alone");
    let commit = r.commit.clone().expect("a promotion commits");
    assert_eq!(git_out(&root, &["rev-parse", "HEAD"]).trim(), commit);
    assert_eq!(commit_count(&root), before + 1, "exactly one commit");
    let msg = head_message(&root);
    assert!(msg.starts_with("ranger: 1 promoted, 0 pruned"), "{msg}");
    assert!(msg.contains("promote n/a discovered-shortcut->n/b 0.8"), "{msg}");
    let a = node(&root, "n/a");
    assert_eq!(a.links()[0].confidence, Some(0.8));
    assert_eq!(a.get_str("updated"), Some(today()));
    assert_eq!(node(&root, "n/e").links()[0].confidence, Some(0.3));
    // Catalog upserted after the commit.
    let cat = open_catalog(&root).unwrap();
    assert_eq!(cat.edges_out("n/a").unwrap()[0].confidence, 0.8);
    assert_eq!(cat.get("n/a").unwrap().unwrap().stale, 1);

    // Second run at the same clock: nothing to do, no commit.
    let r2 = run_at(&root, &git, T0);
    assert!(r2.links.promoted.is_empty() && r2.links.pruned.is_empty());
    assert_eq!(r2.commit, None);
    assert_eq!(commit_count(&root), before + 1);

    // 400 days later everything is dust: cold managed links pruned, the
    // promoted one (0.8 > 0.5) and structural ones never.
    let r3 = run_at(&root, &git, T0 + 400.0 * DAY);
    assert_eq!(r3.links.pruned, vec!["n/c related-to->n/d", "n/e related-to->n/f"]);
    assert!(r3.links.promoted.is_empty());
    let msg = head_message(&root);
    assert!(msg.starts_with("ranger: 0 promoted, 2 pruned"), "{msg}");
    assert!(msg.contains("prune n/c related-to->n/d"), "{msg}");
    assert!(node(&root, "n/c").front.get("links").is_none(), "empty links key dropped");
    assert_eq!(node(&root, "n/a").links()[0].confidence, Some(0.8));
    assert_eq!(std::fs::read(root.join("n/g.md")).unwrap(), g_before, "structural untouched");
    // Never deletes nodes.
    for id in ["n/a", "n/b", "n/c", "n/d", "n/e", "n/f", "n/g", "n/h", "n/z"] {
        assert!(root.join(format!("{id}.md")).is_file(), "{id} kept");
    }
    assert_eq!(run_at(&root, &git, T0 + 400.0 * DAY).commit, None);
    assert_fsck_clean(&root);
}

#[test]
fn uncommitted_edit_is_never_swept_into_the_commit() {
    let (_d, root, git) = synthetic();
    deposit(&root, &["n/a", "n/b"], 0.4, "", T0);
    let edited = std::fs::read_to_string(root.join("n/a.md")).unwrap() + "\nHand edit.\n";
    std::fs::write(root.join("n/a.md"), &edited).unwrap();
    let r = run_at(&root, &git, T0);
    assert!(r.links.promoted.is_empty());
    assert_eq!(r.links.skipped.len(), 1, "{:?}", r.links.skipped);
    assert_eq!(std::fs::read_to_string(root.join("n/a.md")).unwrap(), edited);
}

#[test]
fn stale_catalog_is_healed_from_the_files() {
    let (_d, root, git) = synthetic();
    // A commit the catalog never saw (as after a kill between commit and upsert).
    git.commit_batch(&[write("n/c", leaf("n/c", &[("related-to", "n/d", Some(0.8))]))], "hand: promote").unwrap();
    let r = run_at(&root, &git, T0);
    // The file says 0.8 (never prunable); the stale catalog said 0.3.
    assert!(!r.links.pruned.contains(&"n/c related-to->n/d".to_string()), "{:?}", r.links);
    let cat = open_catalog(&root).unwrap();
    assert_eq!(cat.edges_out("n/c").unwrap()[0].confidence, 0.8);
}

// ---------------------------------------------------------------- landmarks

/// The shared fixture forest in its own git repo, catalog built, plus a
/// degree-0 node, a fat branch, a lost passport and a hand-edited summary.
fn fixture() -> (tempfile::TempDir, PathBuf, GitForest) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let src = &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures/fixture-forest");
    let status = Command::new("cp").arg("-r").arg(src).arg(&root).status().unwrap();
    assert!(status.success());
    let mut files = vec![(".gitignore".to_string(), GITIGNORE.as_bytes().to_vec())];
    for rel in forest_model::walk::node_paths(&root) {
        files.push((rel.clone(), std::fs::read(root.join(&rel)).unwrap()));
    }
    let git = GitForest::init(&root, "fixture", &files).unwrap();
    let mut big = String::from(
        "---\nid: big/_index\ntype: branch\ntitle: Big\nsummary: A fat branch.\n---\n\n# Big\n\n\
         > A fat branch.\n\n## Sub-branches\n\n## Direct bananas\n\n",
    );
    for i in 0..160 {
        big.push_str(&format!("- [[big/x{i}]] — fake entry {i}\n"));
    }
    let source_root = dir.path().join("src");
    std::fs::create_dir_all(&source_root).unwrap();
    std::fs::write(source_root.join("here.txt"), "present").unwrap();
    let passport = |id: &str, path: &str, extra: &str| {
        format!(
            "---\nid: {id}\ntype: document\ntitle: P\nsummary: A passport.\nsource: ingest\n\
             source_path: {path}\nsource_hash: sha256:{}\n{extra}---\n\n# P\n",
            "0".repeat(64)
        )
    };
    let edited = format!(
        "---\nid: notes/edited\ntype: note\ntitle: E\nsummary: Hand edited.\nscent: derived\n\
         scent_hash: {}\n---\n\n# E\n",
        summary_fingerprint("Machine wrote this.")
    );
    git.commit_batch(
        &[
            write("notes/lonely", leaf("notes/lonely", &[])),
            write("notes/shortcut", leaf("notes/shortcut", &[("related-to", "concepts/rag", Some(0.5))])),
            Change::Write { path: "big/_index.md".into(), bytes: big.into_bytes() },
            Change::Write { path: "docs/gone.md".into(), bytes: passport("docs/gone", "gone.pdf", "").into_bytes() },
            Change::Write { path: "docs/here.md".into(), bytes: passport("docs/here", "here.txt", "").into_bytes() },
            Change::Write {
                path: "docs/vanished.md".into(),
                bytes: passport("docs/vanished", "here.txt", "source_name: other\nsource_state: vanished\n")
                    .into_bytes(),
            },
            Change::Write { path: "notes/edited.md".into(), bytes: edited.into_bytes() },
        ],
        "test: extras",
    )
    .unwrap();
    std::fs::write(root.join("_meta/gardener.yaml"), format!("source_root: {}\n", source_root.display())).unwrap();
    reindex(&root).unwrap();
    (dir, root, git)
}

#[test]
fn landmarks_refresh_then_stay() {
    let (_d, root, git) = fixture();
    let r = run_at(&root, &git, T0);
    let lines = section_entries(&node(&root, "_index").body, LANDMARKS);
    assert!((1..=20).contains(&lines.len()), "{} lines", lines.len());
    assert_eq!(r.landmarks.landmarks, lines.len());
    let cat = open_catalog(&root).unwrap();
    let mut prev = i64::MAX;
    for l in &lines {
        assert!(l.contains(" — "), "{l}");
        let id = forest_model::index::entry_id(l).unwrap();
        assert!(!id.ends_with("_index"), "{id}");
        let deg = cat.degree(id).unwrap();
        assert!(deg > 0 && deg <= prev, "{id}: degree {deg} after {prev}");
        prev = deg;
    }
    assert_eq!(cat.degree("notes/lonely").unwrap(), 0);
    assert!(!lines.iter().any(|l| l.contains("[[notes/lonely]]")));
    if r.landmarks.changed {
        assert!(head_message(&root).contains("landmarks refreshed"));
    }
    let head = git_out(&root, &["rev-parse", "HEAD"]);
    let r2 = run_at(&root, &git, T0);
    assert!(!r2.landmarks.changed);
    assert_eq!(r2.commit, None);
    assert_eq!(git_out(&root, &["rev-parse", "HEAD"]), head);
    assert_fsck_clean(&root);
}

// ---------------------------------------------------------------- health

#[test]
fn health_report_on_fixture() {
    let (_d, root, git) = fixture();
    deposit(&root, &["concepts/rag"], 0.3, "", T0);
    let r = run_at(&root, &git, T0);
    let h = &r.health;
    assert!(h.needs_split.contains(&"big/_index".to_string()), "{:?}", h.needs_split);
    assert!(h.stale_passports.contains(&"docs/gone".to_string()));
    assert!(h.stale_passports.contains(&"docs/vanished".to_string()));
    assert!(!h.stale_passports.contains(&"docs/here".to_string()));
    assert_eq!(h.summary_stale, vec!["notes/edited"]);
    assert!(h.uncertain_links.get("0.5").copied().unwrap_or(0) >= 1, "{:?}", h.uncertain_links);
    assert_eq!(h.sources.get("default"), Some(&2));
    assert_eq!(h.sources.get("other"), Some(&1));
    assert_eq!(h.heat.rows, 1);
    assert_eq!(h.heat.max, 0.3);
    let json = serde_json::to_value(h).unwrap();
    for k in [
        "needs_split",
        "fat_nodes",
        "lint",
        "stale_passports",
        "needs_description",
        "uncertain_links",
        "heat",
        "summary_stale",
        "sources",
    ] {
        assert!(json.get(k).is_some(), "missing {k}");
    }
    assert!(json["lint"].get("errors").is_some() && json["lint"].get("warnings").is_some());
    assert!(json["heat"].get("mean").is_some());
    // The standalone entry point agrees with the run's view.
    let cat = open_catalog(&root).unwrap();
    assert_eq!(&health(&root, &cat, &trails(&root)).unwrap(), h);
}

#[test]
fn run_report_keys_exactly_and_gc_value() {
    let (_d, root, git) = synthetic();
    let r = run_at(&root, &git, T0);
    let json = serde_json::to_value(&r).unwrap();
    let keys: BTreeSet<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    let want: BTreeSet<&str> =
        ["evaporation", "payload_cache", "links", "landmarks", "health", "gc", "timings_ms", "commit"].into();
    assert_eq!(keys, want);
    assert!(["ran", "skipped", "unavailable"].contains(&json["gc"].as_str().unwrap()));
    let ev: BTreeSet<&str> = json["evaporation"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(ev, ["decayed", "removed", "stale_sessions_cleared"].into());
    assert_eq!(r.payload_cache.evicted, 0);
    let schema = schemars::schema_for!(RangerReport);
    assert!(serde_json::to_string(&schema).unwrap().contains("timings_ms"));
}

/// A fresh clone has no catalog and no health cache: the catalog rebuild
/// fills the health cache from the same reads, so the health pass after it
/// reads no node that parses, and its report equals one computed from
/// scratch.
#[test]
fn a_fresh_clone_reads_each_node_once() {
    use forest_model::health_facts::HEALTH_CACHE_PATH;
    let (d, root, git) = fixture();
    run_at(&root, &git, T0);
    let clone = d.path().join("clone");
    let out = Command::new("git").arg("clone").arg("-q").arg(&root).arg(&clone).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!clone.join(HEALTH_CACHE_PATH).exists() && !clone.join(forest_derived::catalog::CATALOG_PATH).exists());
    let rows = reindex(&clone).unwrap();
    assert!(clone.join(HEALTH_CACHE_PATH).exists(), "the rebuild filled no health cache");
    let nodes = forest_model::walk::node_paths(&clone);
    let unparsed = nodes
        .iter()
        .filter(|rel| std::fs::read_to_string(clone.join(rel)).map_or(true, |t| Node::parse(&t).is_err()))
        .count();
    assert_eq!(rows, nodes.len() - unparsed);
    let cat = open_catalog(&clone).unwrap();
    let filled = health(&clone, &cat, &trails(&clone)).unwrap();
    // What the pass after the rebuild read again: only what does not parse.
    let (_, misses, stats) = forest_model::lint_cache::lint_forest_cached(
        &clone,
        &clone.join(HEALTH_CACHE_PATH),
        forest_model::health_facts::FACTS_VERSION,
        forest_model::health_facts::facts,
        || 0usize,
        |n, _, _| n + 1,
        |a, b| a + b,
    );
    assert_eq!((stats.misses, stats.hits), (unparsed, nodes.len() - unparsed), "{misses} facts");
    std::fs::remove_file(clone.join(HEALTH_CACHE_PATH)).unwrap();
    assert_eq!(health(&clone, &cat, &trails(&clone)).unwrap(), filled, "cached and scratch reports differ");
}

#[test]
fn payload_cache_is_evicted_during_a_run() {
    let (_d, root, git) = synthetic();
    let cache = root.join(PAYLOADS_DIR);
    std::fs::create_dir_all(&cache).unwrap();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let p = cache.join(name);
        std::fs::write(&p, [0u8; 10]).unwrap();
        let t = std::time::UNIX_EPOCH + Duration::from_secs(1_000 + i as u64);
        std::fs::File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
    }
    std::fs::write(root.join("_meta/ranger.yaml"), "payload_cache_gb: 0.00000002\n").unwrap();
    let cfg = RangerConfig::load(&root).unwrap();
    let r = run(&root, &git, T0, &cfg).unwrap();
    assert_eq!((r.payload_cache.evicted, r.payload_cache.kept_bytes), (1, 20));
    assert!(!cache.join("a").exists());
}

#[test]
fn ranger_yaml_is_versioned_by_the_run_commit() {
    let (_d, root, git) = synthetic();
    let before = commit_count(&root);
    std::fs::write(root.join("_meta/ranger.yaml"), "half_life_days: 7\n").unwrap();
    let cfg = RangerConfig::load(&root).unwrap();
    let r = run(&root, &git, T0, &cfg).unwrap();
    assert!(r.commit.is_some());
    assert!(head_message(&root).contains("_meta/ranger.yaml recorded"), "{}", head_message(&root));
    assert_eq!(git_out(&root, &["show", "HEAD:_meta/ranger.yaml"]), "half_life_days: 7\n");
    // Recorded once: the next run at the same clock commits nothing.
    let n = commit_count(&root);
    assert!(n > before);
    assert_eq!(run(&root, &git, T0, &cfg).unwrap().commit, None);
    assert_eq!(commit_count(&root), n);
    // An invalid edit is refused before anything is committed.
    std::fs::write(root.join("_meta/ranger.yaml"), "half_life_dayz: 7\n").unwrap();
    assert_eq!(run(&root, &git, T0, &cfg).unwrap_err().code(), "E_CONFIG");
    assert_eq!(commit_count(&root), n);
}

#[test]
fn ranger_yaml_errors_name_the_key() {
    let (_d, root, _git) = synthetic();
    for (text, key) in [
        ("half_life_days: 30\nprune_belo: 0.4\n", "prune_belo"),
        ("promote_floor: -0.1\n", "promote_floor"),
        ("session_ttl_hours: soon\n", "session_ttl_hours"),
    ] {
        std::fs::write(root.join("_meta/ranger.yaml"), text).unwrap();
        let err = RangerConfig::load(&root).unwrap_err();
        assert_eq!(err.code(), "E_CONFIG");
        assert!(err.to_string().contains(key), "{err} should name {key}");
    }
}

// ---------------------------------------------------------------- idempotence

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// evaporate(t); evaporate(t) == evaporate(t), and later passes compose.
    #[test]
    fn evaporation_idempotent_and_composes(
        rows in prop::collection::vec((0.0f64..1.0, 0.0f64..100.0), 1..12),
        dt1 in 0.0f64..200.0,
        dt2 in 0.0f64..200.0,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut once = Trails::open(&dir.path().join("a.db")).unwrap();
        let mut twice = Trails::open(&dir.path().join("b.db")).unwrap();
        for (i, (h, age)) in rows.iter().enumerate() {
            let id = vec![format!("n{i}")];
            once.deposit_at(&id, *h, "", T0 - age * DAY).unwrap();
            twice.deposit_at(&id, *h, "", T0 - age * DAY).unwrap();
        }
        once.evaporate(T0 + dt1 * DAY, 30.0).unwrap();
        twice.evaporate(T0 + dt1 * DAY, 30.0).unwrap();
        let second = twice.evaporate(T0 + dt1 * DAY, 30.0).unwrap();
        prop_assert_eq!((second.decayed, second.removed), (0, 0));
        prop_assert_eq!(once.persistent_rows().unwrap(), twice.persistent_rows().unwrap());
        // Two steps decay like one (up to float error), dust aside.
        let t2 = T0 + (dt1 + dt2) * DAY;
        once.evaporate(t2, 30.0).unwrap();
        let mut direct = Trails::open(&dir.path().join("c.db")).unwrap();
        for (i, (h, age)) in rows.iter().enumerate() {
            direct.deposit_at(&[format!("n{i}")], *h, "", T0 - age * DAY).unwrap();
        }
        direct.evaporate(t2, 30.0).unwrap();
        let a = once.persistent_rows().unwrap();
        let b = direct.persistent_rows().unwrap();
        for (x, y) in a.iter().zip(&b) {
            if x.0 == y.0 { prop_assert!((x.1 - y.1).abs() < 1e-9); }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    /// run(t); run(t) leaves the forest, HEAD and heat exactly as run(t).
    #[test]
    fn run_is_idempotent_at_a_fixed_clock(
        heats in prop::collection::vec(prop::sample::select(vec![0.0, 0.1, 0.2, 0.5]), 9),
        days in prop::sample::select(vec![0.0, 10.0, 400.0]),
    ) {
        let (_d, root, git) = synthetic();
        let ids = ["n/a", "n/b", "n/c", "n/d", "n/e", "n/f", "n/g", "n/h", "n/z"];
        for (id, h) in ids.iter().zip(&heats) {
            if *h > 0.0 { deposit(&root, &[id], *h, "", T0); }
        }
        let now = T0 + days * DAY;
        run_at(&root, &git, now);
        let head = git_out(&root, &["rev-parse", "HEAD"]);
        let heat = trails(&root).persistent_rows().unwrap();
        let files: Vec<Vec<u8>> = ids.iter().map(|i| std::fs::read(root.join(format!("{i}.md"))).unwrap()).collect();
        let again = run_at(&root, &git, now);
        prop_assert_eq!(again.commit, None);
        prop_assert_eq!(git_out(&root, &["rev-parse", "HEAD"]), head);
        prop_assert_eq!(trails(&root).persistent_rows().unwrap(), heat);
        let files2: Vec<Vec<u8>> = ids.iter().map(|i| std::fs::read(root.join(format!("{i}.md"))).unwrap()).collect();
        prop_assert_eq!(files2, files);
    }
}

// ---------------------------------------------------------------- daemon

/// Fake clock: `sleep` advances virtual time instantly.
struct FakeClock(Mutex<f64>);

impl Clock for FakeClock {
    fn now(&self) -> f64 {
        *self.0.lock().unwrap()
    }
    fn sleep(&self, d: Duration) {
        *self.0.lock().unwrap() += d.as_secs_f64();
    }
}

fn fake(at: f64) -> DaemonOptions {
    DaemonOptions { slice: Duration::from_secs(7), clock: Arc::new(FakeClock(Mutex::new(at))) }
}

#[test]
fn daemon_fires_on_schedule_and_records_state() {
    let (_d, root, _git) = synthetic();
    let stop = Arc::new(AtomicBool::new(false));
    let opts = fake(T0 + 12.5);
    let mut seen = vec![];
    let s = daemon_with(&root, "* * * * *", stop.clone(), &opts, |r| {
        seen.push(r.as_ref().map(|r| r.commit.clone()).map_err(|e| e.to_string()));
        if seen.len() == 2 {
            stop.store(true, Ordering::SeqCst);
        }
    })
    .unwrap();
    assert_eq!(s.runs, 2);
    assert!(!s.caught_up, "no state yet: nothing was missed");
    assert!(seen.iter().all(|r| r.is_ok()), "{seen:?}");
    let state = read_state(&root).unwrap();
    assert_eq!(state.last_run, T0 + 120.0, "second fire of a minutely schedule");
    assert!(!root.join(forest_git::LOCK_FILE).exists(), "lock released after each run");
}

#[test]
fn daemon_catches_up_once_at_start() {
    let (_d, root, _git) = synthetic();
    let state = serde_json::json!({"last_run": T0 - 2.0 * DAY, "last_commit": null});
    forest_fs::atomic_write(&root.join(STATE_PATH), state.to_string().as_bytes()).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let opts = fake(T0 + 3600.0);
    let clock = opts.clock.clone();
    let mut at = vec![];
    let s = daemon_with(&root, "0 3 * * *", stop.clone(), &opts, |_| {
        at.push(clock.now());
        stop.store(true, Ordering::SeqCst);
    })
    .unwrap();
    assert!(s.caught_up);
    assert_eq!(at, vec![T0 + 3600.0], "caught up immediately, before any sleep");
    assert_eq!(read_state(&root).unwrap().last_run, T0 + 3600.0);
    // Restarted right after: the next 03:00 is still ahead, no catch-up.
    stop.store(false, Ordering::SeqCst);
    let mut n = 0;
    let s2 = daemon_with(&root, "0 3 * * *", stop.clone(), &fake(T0 + 3700.0), |_| {
        n += 1;
        stop.store(true, Ordering::SeqCst);
    })
    .unwrap();
    assert!(!s2.caught_up);
    assert_eq!((s2.runs, n), (1, 1));
    assert_eq!(read_state(&root).unwrap().last_run, T0 + 3.0 * 3600.0);
}

#[test]
fn daemon_skips_a_fire_when_locked() {
    let (_d, root, _git) = synthetic();
    let held = WriterLock::acquire(&root).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mut codes = vec![];
    let s = daemon_with(&root, "* * * * *", stop.clone(), &fake(T0), |r| {
        codes.push(r.as_ref().err().map(|e| e.code().as_str()));
        stop.store(true, Ordering::SeqCst);
    })
    .unwrap();
    drop(held);
    assert_eq!(codes, vec![Some("E_LOCKED")]);
    assert_eq!((s.locked, s.runs), (1, 0));
    assert!(read_state(&root).is_none(), "a skipped fire records nothing");
}

#[test]
fn daemon_on_the_wall_clock_fires_and_stops() {
    let (_d, root, _git) = synthetic();
    let stop = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    // Six fields = every second: the real scheduler without a minute's wait.
    let s = daemon(&root, "* * * * * *", stop.clone(), |r| {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
        stop.store(true, Ordering::SeqCst);
    })
    .unwrap();
    assert_eq!(s.runs, 1);
    assert!(started.elapsed() < Duration::from_secs(20));

    // A far schedule returns promptly once the flag is raised by a signal.
    stop.store(false, Ordering::SeqCst);
    install_signal_handlers(stop.clone()).unwrap();
    let t = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(300));
        signal_hook::low_level::raise(signal_hook::consts::SIGTERM).unwrap();
    });
    let started = Instant::now();
    let s = daemon(&root, "0 3 1 1 *", stop.clone(), |_| {}).unwrap();
    t.join().unwrap();
    assert_eq!(s.runs, 0);
    assert!(stop.load(Ordering::SeqCst));
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
}

// ---------------------------------------------------------------- SIGKILL mid-run

const CHILD_ENV: &str = "FOREST_RANGER_CHILD_FOREST";

/// Child mode of `killed_mid_run_leaves_a_valid_forest`: the test re-runs
/// itself with `CHILD_ENV` set and is killed while doing one Ranger run.
fn child_run(root: &Path) {
    let _lock = WriterLock::acquire(root).unwrap();
    let git = GitForest::open(root).unwrap();
    run(root, &git, T0, &RangerConfig::default()).unwrap();
}

fn busy_forest(root: &Path) {
    let git = init_forest(root, "Busy").unwrap();
    let n = 600;
    let mut changes = vec![];
    for i in 0..n {
        let id = format!("b/n{i}");
        let t = format!("b/n{}", (i + 1) % n);
        changes.push(write(&id, leaf(&id, &[("related-to", &t, Some(0.3))])));
    }
    git.commit_batch(&changes, "busy").unwrap();
    reindex(root).unwrap();
    // Half hot (promote), half without heat (prune).
    let hot: Vec<String> = (0..n / 2).map(|i| format!("b/n{i}")).collect();
    trails(root).deposit_at(&hot, 0.5, "", T0).unwrap();
}

#[test]
fn killed_mid_run_leaves_a_valid_forest() {
    if let Some(root) = std::env::var_os(CHILD_ENV) {
        child_run(Path::new(&root));
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let template = dir.path().join("template");
    busy_forest(&template);
    // Measure an uninterrupted child run to spread kill points over it.
    let exe = std::env::current_exe().unwrap();
    let spawn = |root: &Path| {
        Command::new(&exe)
            .args(["--exact", "killed_mid_run_leaves_a_valid_forest", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, root)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let copy = |name: &str| {
        let p = dir.path().join(name);
        assert!(Command::new("cp").arg("-a").arg(&template).arg(&p).status().unwrap().success());
        p
    };
    let full = copy("full");
    let t = Instant::now();
    assert!(spawn(&full).wait().unwrap().success());
    let span = t.elapsed();
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() as u64;
    let mut x = seed | 1;
    for k in 0..4 {
        // xorshift: a different set of kill points every time.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let delay = span.mul_f64((x % 1000) as f64 / 1000.0);
        let root = copy(&format!("k{k}"));
        let mut child = spawn(&root);
        std::thread::sleep(delay);
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // Next start: open repairs the work tree, the repo is consistent.
        let git = GitForest::open(&root).unwrap();
        assert_fsck_clean(&root);
        for rel in forest_model::walk::node_paths(&root) {
            let text = std::fs::read_to_string(root.join(&rel)).unwrap();
            assert!(Node::parse(&text).is_ok(), "{rel} after kill at {delay:?}");
        }
        let r = run(&root, &git, T0, &RangerConfig::default()).unwrap();
        // The completing run converges to the uninterrupted result.
        let again = run(&root, &git, T0, &RangerConfig::default()).unwrap();
        assert_eq!(again.commit, None, "kill at {delay:?}: {:?}", r.links);
        for i in [0usize, 599] {
            let rel = format!("b/n{i}.md");
            assert_eq!(
                node(&root, &format!("b/n{i}")).links(),
                node(&full, &format!("b/n{i}")).links(),
                "{rel} after kill at {delay:?}"
            );
        }
        assert_fsck_clean(&root);
    }
}

// ---------------------------------------------------------------- ops

fn ops_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ops")
}

#[test]
fn systemd_units_verify() {
    let Ok(out) = Command::new("systemd-analyze").arg("--version").output() else {
        forest_testkit::skip("systemd-analyze is not installed (apt-get install -y systemd)");
        return;
    };
    assert!(out.status.success());
    // verify insists that ExecStart exists; the forest binary is installed
    // by packaging, so point the copies at a binary that does.
    let tmp = tempfile::tempdir().unwrap();
    let mut units = vec![];
    for name in ["forest-ranger.service", "forest-ranger.timer", "forest-sync.service", "forest-sync.timer"] {
        let text = std::fs::read_to_string(ops_dir().join("systemd").join(name)).unwrap();
        assert!(text.lines().any(|l| l.starts_with('#')), "{name} has comments");
        let p = tmp.path().join(name);
        std::fs::write(&p, text.replace("/usr/local/bin/forest", "/bin/true")).unwrap();
        units.push(p);
    }
    let out = Command::new("systemd-analyze").arg("verify").args(&units).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success() && stderr.trim().is_empty(), "verify: {stderr}");
}

#[test]
fn k8s_cronjobs_parse_with_valid_schedules() {
    for (name, args0) in [("forest-ranger-cronjob.yaml", "ranger"), ("forest-sync-cronjob.yaml", "sync")] {
        let text = std::fs::read_to_string(ops_dir().join("k8s").join(name)).unwrap();
        let m = forest_model::yaml::parse_mapping(&text).unwrap();
        assert_eq!(m.get("kind").and_then(|v| v.as_str()), Some("CronJob"));
        let spec = m.get("spec").unwrap();
        let schedule = spec.get("schedule").and_then(|v| v.as_str()).unwrap();
        parse_schedule(schedule).unwrap();
        assert_eq!(spec.get("concurrencyPolicy").and_then(|v| v.as_str()), Some("Forbid"));
        let container = &spec["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(container["args"][0].as_str(), Some(args0));
    }
}

#[test]
fn a_pruned_twin_of_a_kept_link_leaves_the_landmarks_settled() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let git = init_forest(&root, "Test").unwrap();
    // The same rel and target twice (added again by another writer after a
    // promotion): the catalog holds one edge for both.
    let changes = vec![
        write("n/p", leaf("n/p", &[("related-to", "n/q", Some(0.8)), ("related-to", "n/q", Some(0.3))])),
        write("n/q", leaf("n/q", &[])),
        write("n/r", leaf("n/r", &[("related-to", "n/q", Some(0.3))])),
    ];
    git.commit_batch(&changes, "test: nodes").unwrap();
    reindex(&root).unwrap();
    let later = T0 + 400.0 * DAY;
    let r = run_at(&root, &git, later);
    assert_eq!(r.links.pruned, vec!["n/p related-to->n/q", "n/r related-to->n/q"]);
    assert_eq!(node(&root, "n/p").links().len(), 1, "the promoted twin stays");
    let lines = section_entries(&node(&root, "_index").body, LANDMARKS);
    let ids: Vec<&str> = lines.iter().filter_map(|l| forest_model::index::entry_id(l)).collect();
    assert_eq!(ids, vec!["n/p", "n/q"], "degree 1 each after the prunes");
    let cat = open_catalog(&root).unwrap();
    assert_eq!((cat.degree("n/p").unwrap(), cat.degree("n/q").unwrap(), cat.degree("n/r").unwrap()), (1, 1, 0));
    drop(cat);
    let r2 = run_at(&root, &git, later);
    assert_eq!(r2.commit, None, "landmarks {:?}", r2.landmarks);
    assert_fsck_clean(&root);
}

#[test]
fn the_master_pruned_and_given_landmarks_in_one_run_keeps_both() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("forest");
    let git = init_forest(&root, "Test").unwrap();
    // The master carries a cold managed link; n/p -> n/q is structural.
    let mut master = node(&root, "_index");
    let mut m = forest_model::yaml::Mapping::new();
    m.insert("rel".into(), "related-to".into());
    m.insert("target".into(), "n/q".into());
    m.insert("confidence".into(), 0.3.into());
    master.set("links", forest_model::yaml::Value::Sequence(vec![forest_model::yaml::Value::Mapping(m)]));
    let changes = vec![
        Change::Write { path: "_index.md".into(), bytes: master.to_text().into_bytes() },
        write("n/p", leaf("n/p", &[("part-of", "n/q", None)])),
        write("n/q", leaf("n/q", &[])),
    ];
    git.commit_batch(&changes, "test: nodes").unwrap();
    reindex(&root).unwrap();
    let later = T0 + 400.0 * DAY;
    let r = run_at(&root, &git, later);
    assert_eq!(r.links.pruned, vec!["_index related-to->n/q"]);
    assert!(r.landmarks.changed);
    let after = node(&root, "_index");
    assert!(after.front.get("links").is_none(), "the prune is in the committed master");
    let lines = section_entries(&after.body, LANDMARKS);
    let ids: Vec<&str> = lines.iter().filter_map(|l| forest_model::index::entry_id(l)).collect();
    assert_eq!(ids, vec!["n/p", "n/q"], "and so are the landmarks");
    assert_eq!(git_out(&root, &["status", "--porcelain"]), "");
    assert_eq!(run_at(&root, &git, later).commit, None);
    assert_fsck_clean(&root);
}
