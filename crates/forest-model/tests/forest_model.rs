//! Integration tests of the dialect model against the shared fixtures.

use forest_model::lint::{lint_forest, Level};
use forest_model::node::Node;
use forest_model::walk::node_paths;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    // Fixtures live in the repository (forests/fixtures); FOREST_FIXTURES overrides.
    if let Ok(p) = std::env::var("FOREST_FIXTURES") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures")
}

#[test]
fn fixture_forest_validates_clean() {
    let report = lint_forest(&fixtures().join("fixture-forest"));
    // fixture-forest.EXPECTED.md: "0 error(s), 0 warning(s)".
    let expected = std::fs::read_to_string(fixtures().join("fixture-forest.EXPECTED.md")).unwrap();
    let line = format!("{} error(s), {} warning(s)", report.errors, report.warnings);
    assert!(expected.contains(&line), "got {line}: {:#?}", report.issues);
    assert_eq!(report.nodes, 82);
}

#[test]
fn lint_cases_match_reference_pairs() {
    let report = lint_forest(&fixtures().join("lint-cases"));
    let expected = std::fs::read_to_string(fixtures().join("lint-cases.EXPECTED.txt")).unwrap();
    let mut want: Vec<(String, String)> = expected
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('[')?;
            let (level, rest) = rest.split_once("] ")?;
            let (id, _) = rest.split_once(": ")?;
            Some((id.to_string(), level.to_string()))
        })
        .collect();
    let mut got: Vec<(String, String)> = report
        .issues
        .iter()
        .map(|i| (i.id.clone(), if i.level == Level::Error { "error" } else { "warning" }.to_string()))
        .collect();
    want.sort();
    got.sort();
    assert_eq!(got, want, "{:#?}", report.issues);
    let summary = format!("{} error(s), {} warning(s)", report.errors, report.warnings);
    assert!(expected.contains(&summary), "{summary}");
}

#[test]
fn every_fixture_node_round_trips_without_data_change() {
    let root = fixtures().join("fixture-forest");
    let paths = node_paths(&root);
    assert!(!paths.is_empty());
    for rel in paths {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let node = Node::parse(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let again = Node::parse(&node.to_text()).unwrap();
        assert_eq!(again.front, node.front, "{rel}");
        assert_eq!(again.body.trim_end(), node.body.trim_end(), "{rel}");
        // Serialising twice is a fixed point.
        assert_eq!(again.to_text(), node.to_text(), "{rel}");
    }
}

#[test]
fn emitted_yaml_is_read_identically_by_pyyaml_when_available() {
    // Cross-reader check: PyYAML (YAML 1.1) must read what we write as the
    // same data our YAML 1.2 parser reads. Skipped with a note when python3
    // or PyYAML is missing.
    let ok = std::process::Command::new("python3").args(["-c", "import yaml"]).output();
    if !ok.map(|o| o.status.success()).unwrap_or(false) {
        forest_testkit::skip("python3 with PyYAML is not available");
        return;
    }
    let root = fixtures().join("fixture-forest");
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for rel in node_paths(&root) {
        let node = Node::parse(&std::fs::read_to_string(root.join(&rel)).unwrap()).unwrap();
        let ours = serde_json::to_string(&node.front).unwrap();
        let f = dir.path().join(format!("{n}.yaml"));
        std::fs::write(&f, forest_model::yaml::emit_mapping(&node.front)).unwrap();
        std::fs::write(dir.path().join(format!("{n}.json")), ours).unwrap();
        n += 1;
    }
    let script = format!(
        "import yaml,json,sys,datetime\nbad=0\nfor i in range({n}):\n  y=yaml.safe_load(open('{d}/%d.yaml'%i))\n  j=json.load(open('{d}/%d.json'%i))\n  if y!=j:\n    print(i,y,j); bad+=1\nsys.exit(1 if bad else 0)\n",
        d = dir.path().display()
    );
    let out = std::process::Command::new("python3").args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The cached lint equals the uncached one after every kind of change, and
/// re-reads only what changed.
#[test]
fn cached_lint_equals_fresh_lint() {
    use forest_model::lint_cache::{lint_forest_cached, record_written};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("f");
    copy_dir(&fixtures().join("lint-cases"), &root);
    let cache = root.join("_derived/lint.db");
    let titles = |root: &Path| {
        lint_forest_cached(
            root,
            &cache,
            "t1",
            |_, n| n.get_str("title").unwrap_or_default(),
            Vec::new,
            |mut acc: Vec<String>, id, t: &String| {
                acc.push(format!("{id}={t}"));
                acc
            },
            |mut a, b| {
                a.extend(b);
                a
            },
        )
    };
    let shown = |r: &forest_model::lint::LintReport| r.issues.iter().map(|i| i.to_string()).collect::<Vec<_>>();
    let check = |want_misses: usize| {
        let fresh = lint_forest(&root);
        let (cached, mut facts, stats) = titles(&root);
        assert_eq!(shown(&cached), shown(&fresh));
        assert_eq!((cached.errors, cached.warnings, cached.nodes), (fresh.errors, fresh.warnings, fresh.nodes));
        assert_eq!(stats.misses, want_misses, "{stats:?}");
        assert_eq!(stats.hits + stats.misses, fresh.nodes);
        facts.sort();
        facts
    };
    let n = lint_forest(&root).nodes;
    assert!(lint_forest(&root).errors > 0, "the cases must have findings to compare");
    let first = check(n);
    assert_eq!(check(0), first);

    // An edited node is re-read; its new title reaches the fold.
    let paths = node_paths(&root);
    let victim = paths.iter().find(|p| !p.starts_with("_meta")).unwrap().clone();
    let text = std::fs::read_to_string(root.join(&victim)).unwrap();
    std::fs::write(root.join(&victim), text.replacen("title:", "title: Edited", 1)).unwrap();
    let after_edit = check(1);
    assert_ne!(after_edit, first);

    // A deleted node: nothing re-read, but links to it now break.
    let target = paths.iter().rev().find(|p| !p.starts_with("_meta") && **p != victim).unwrap();
    std::fs::remove_file(root.join(target)).unwrap();
    check(0);
    // A new node is read once; a different facts version reads everything.
    std::fs::write(
        root.join("fresh-node.md"),
        "---\nid: fresh-node\ntype: note\ntitle: Fresh\nsummary: A fresh node.\ncreated: '2026-01-01'\nupdated: '2026-01-01'\n---\n\n# Fresh\n",
    )
    .unwrap();
    check(1);
    // What a writer recorded is a hit (its facts reach the fold); a file
    // rewritten since the writer's text (another size) is left out.
    let written = "---\nid: written\ntype: note\ntitle: Written\nsummary: A written node.\ncreated: '2026-01-01'\nupdated: '2026-01-01'\nlinks:\n- rel: related-to\n  target: no-such-node\n---\n\n# Written\n";
    std::fs::write(root.join("written.md"), written).unwrap();
    std::fs::write(root.join("torn.md"), written.replace("id: written", "id: torn")).unwrap();
    let title = |_: &str, n: &forest_model::node::Node| n.get_str("title").unwrap_or_default();
    let recorded = record_written(&root, &cache, "t1", title, &[("written.md", written), ("torn.md", written)]);
    assert_eq!(recorded, 1);
    let facts = check(1);
    assert!(facts.contains(&"written=Written".to_string()), "{facts:?}");
    assert!(lint_forest(&root).issues.iter().any(|i| i.id == "written"), "the recorded node's broken link is reported");
    let (_, _, stats) = lint_forest_cached(&root, &cache, "t2", |_, _| (), || (), |(), _, _| (), |(), ()| ());
    assert_eq!(stats.hits, 0);
    // A corrupt cache is ignored, never an error.
    std::fs::write(&cache, "not json\n").unwrap();
    let (report, _, stats) = lint_forest_cached(&root, &cache, "t2", |_, _| (), || (), |(), _, _| (), |(), ()| ());
    assert_eq!((stats.hits, report.errors), (0, lint_forest(&root).errors));
}
