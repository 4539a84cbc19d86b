//! One output convention: text by default, the versioned JSON with `--json`
//! (`forest health`, `forest look`), checked against golden files in
//! `tests/cli/golden/` (regenerate with `FOREST_BLESS=1`); hints name CLI
//! commands; `locate` finds inflections and identifiers as users type them.

use super::*;
use serde_json::Value;

fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/golden").join(name);
    if std::env::var_os("FOREST_BLESS").is_some() {
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, got).unwrap();
        return;
    }
    let want =
        fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (FOREST_BLESS=1 writes it)", path.display()));
    assert_eq!(got, want, "{name} differs from its golden file (FOREST_BLESS=1 rewrites it)");
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn health_prints_text_by_default_and_json_with_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest_in_git(d.path());
    let o = run(&["health", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let text = stdout(&o);
    assert!(serde_json::from_str::<Value>(&text).is_err(), "text by default: {text}");
    golden("health.txt", &text);
    let o = run(&["health", "--forest", &f(&root), "--json"]);
    assert_eq!(code(&o), 0);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["needs_split", "fat_nodes", "lint", "stale_passports", "summary_stale", "sources", "known_problems"] {
        assert!(v.get(k).is_some(), "--json has {k}: {v}");
    }
    // The text and the JSON tell the same counts.
    let lint = &v["lint"];
    assert!(text.contains(&format!("{} error(s), {} warning(s)", lint["errors"], lint["warnings"])), "{text}");
}

#[test]
fn look_prints_text_by_default_and_json_with_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest_in_git(d.path());
    let mut text = String::new();
    for id in ["projects/_index", "projects/monkeyllm/pheromone"] {
        let o = run(&["look", "--forest", &f(&root), id]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let t = stdout(&o);
        assert!(serde_json::from_str::<Value>(&t).is_err(), "text by default: {t}");
        assert!(t.starts_with(id), "{t}");
        text.push_str(&t);
        let o = run(&["look", "--forest", &f(&root), id, "--json"]);
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["id"], id);
        assert!(t.contains(v["summary"].as_str().unwrap()), "the digest's summary is in the text");
    }
    // A batch with a missing id says so.
    let o = run(&["look", "--forest", &f(&root), "concepts/mcp", "concepts/nope"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    text.push_str(&stdout(&o));
    golden("look.txt", &text);
}

#[test]
fn hints_name_the_command_line() {
    let d = tempfile::tempdir().unwrap();
    let root = fixture_forest_in_git(d.path());
    let o = run(&["look", "--forest", &f(&root), "no/such-node"]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("E_NOT_FOUND"), "{err}");
    assert!(err.contains("hint: Use `forest locate WORDS...`"), "{err}");
    assert!(!err.contains("locate()"), "{err}");
    // The envelope keeps the agents' wording.
    let o = run(&["look", "--forest", &f(&root), "no/such-node", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["error"]["hint"].as_str().unwrap().contains("locate()"), "{v}");
    let o = run(&["locate", "--forest", &f(&root), "zzzqqqxxx"]);
    assert_eq!(code(&o), 0);
    assert!(stdout(&o).starts_with("no match in "), "{}", stdout(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`forest sniff` searches the bodies"));
}

/// The sample drive, adopted: `locate` matches plurals and identifiers.
#[test]
fn locate_matches_inflections_and_identifiers_in_the_sample_drive() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let drive = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/sample-drive");
    let o = run(&["adopt", "--forest", &f(&root), drive.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let top = |q: &str, k: usize| -> Vec<(String, String, String)> {
        let o = run(&["locate", "--forest", &f(&root), q, "-k", &k.to_string(), "--json"]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let s = |k: &str| r[k].as_str().unwrap().to_string();
                (s("id"), s("title"), s("summary"))
            })
            .collect()
    };
    for q in ["closures", "closure", "Closures"] {
        let hits = top(q, 5);
        assert!(hits.iter().any(|(_, t, _)| t.starts_with("Closure Example")), "{q}: {hits:?}");
    }
    // Every node whose scent carries ffi_type (with or without the
    // separator a summary may have lost) is found by the identifier typed
    // joined or split.
    let o = run(&["scan", "--forest", &f(&root), "_index", "--recursive", "--limit", "200", "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let carry: Vec<String> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| {
            let s = n.get("summary").and_then(Value::as_str).unwrap_or("").to_lowercase();
            s.contains("ffi_type") || s.contains("ffitype")
        })
        .map(|n| n["id"].as_str().unwrap().to_string())
        .collect();
    assert!(!carry.is_empty(), "the sample drive's libffi manual mentions ffi_type in its scent");
    for q in ["ffi_type", "ffi type", "ffi-type"] {
        let ids: Vec<String> = top(q, carry.len().max(5)).into_iter().map(|h| h.0).collect();
        for want in &carry {
            assert!(ids.contains(want), "{q}: {want} not in {ids:?}");
        }
    }
}

/// A file no converter can turn into clean text is planted, reported as
/// suspect (report, passport, `forest health`), and a clean version of it
/// clears the mark.
#[test]
fn an_undecodable_file_is_planted_reported_suspect_and_listed_by_health() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    fs::create_dir_all(&src).unwrap();
    let garbled: Vec<u8> =
        [b"Quarterly report\n".as_slice(), &b"\x01\x02\x03 word \x04\x05\x06\x07\x08\x0e\x0f\n".repeat(80)].concat();
    fs::write(src.join("garbled.txt"), &garbled).unwrap();
    fs::write(src.join("fine.txt"), "A fine note about herons and their nesting habits in spring.\n").unwrap();
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--json"]);
    assert_eq!(code(&o), 0, "a suspect body is not an error: {}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let suspect = v["sources"][0]["suspect"].as_array().unwrap();
    assert_eq!(suspect.len(), 1, "{v}");
    assert_eq!(suspect[0]["path"], "garbled.txt");
    assert_eq!(suspect[0]["reason"], "control_bytes");
    let id = suspect[0]["id"].as_str().unwrap().to_string();
    let node = forest_model::node::Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap();
    assert_eq!(node.get_f64("confidence"), Some(0.3));
    assert!(node.get_str("conversion_suspect").unwrap().starts_with("control_bytes: "));
    let h = run(&["health", "--forest", &f(&root), "--json"]);
    let hv: Value = serde_json::from_slice(&h.stdout).unwrap();
    assert_eq!(hv["suspect_conversions"].as_array().unwrap().len(), 1, "{hv}");
    assert_eq!(hv["suspect_conversions"][0]["id"], id.as_str());
    let text = stdout(&run(&["health", "--forest", &f(&root)]));
    assert!(text.contains("suspect bodies     1") && text.contains(&id), "{text}");
    assert!(text.starts_with("forest health: needs attention"), "{text}");
    // The file is fixed at the source: the next sync clears the mark.
    fs::write(src.join("garbled.txt"), "Quarterly report: revenue grew in every region.\n").unwrap();
    let o = run(&["sync", "--forest", &f(&root), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let node = forest_model::node::Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap();
    assert_eq!(node.get_f64("confidence"), Some(0.7));
    assert_eq!(node.get_str("conversion_suspect"), None);
    let hv: Value = serde_json::from_slice(&run(&["health", "--forest", &f(&root), "--json"]).stdout).unwrap();
    assert!(hv["suspect_conversions"].as_array().unwrap().is_empty(), "{hv}");
}

/// Errors name their cause: a missing source is `E_NOT_FOUND` (not a
/// schema problem), a sync whose every source is gone fails instead of
/// "partial", `health` says why it needs attention and `--check` makes it
/// an exit status, and the Ranger prints no debug labels.
#[test]
fn errors_name_the_cause_and_exit_accordingly() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    // adopt of a folder that does not exist: one line, E_NOT_FOUND, exit 1
    let o = run(&["adopt", "--forest", &f(&root), "/no/such/dir"]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("E_NOT_FOUND") && err.contains("/no/such/dir"), "{err}");
    assert!(!err.contains("E_SCHEMA"), "{err}");
    assert_eq!(err.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{err}");
    // a sync whose only source folder is gone: an error, not a partial run
    let src = d.path().join("drive");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("a.txt"), "Quarterly report: revenue grew in every region.\n").unwrap();
    assert_eq!(code(&run(&["adopt", "--forest", &f(&root), src.to_str().unwrap()])), 0);
    assert_eq!(code(&run(&["health", "--forest", &f(&root), "--check"])), 0, "a fresh forest is healthy");
    fs::remove_dir_all(&src).unwrap();
    let o = run(&["sync", "--forest", &f(&root), "--json"]);
    assert_eq!(code(&o), 1, "nothing was synced: {}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["sources"][0]["unreachable"], true, "{r}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no source could be read"));
    // health names the missing source; --check turns the verdict into an exit status
    let h = run(&["health", "--forest", &f(&root)]);
    assert_eq!(code(&h), 0);
    let first = stdout(&h).lines().next().unwrap_or_default().to_string();
    assert!(first.starts_with("forest health: unhealthy (source folder missing: default ("), "{first}");
    assert_eq!(code(&run(&["health", "--forest", &f(&root), "--check"])), 1);
    // the Ranger's line says what git gc did, in words
    let o = run(&["ranger", "run", "--forest", &f(&root)]);
    let out = stdout(&o);
    assert!(out.contains("git gc") && !out.contains("gc: Ran"), "{out}");
}
