//! `forest snapshot create|restore` end to end over an adopted forest, and
//! across engines: with `FOREST_TEST_MONKEYLLM` naming the bin directory of
//! a venv holding the reference engine (`bash ops/monkeyllm/install.sh`
//! prints it), a reference snapshot restores with ours and ours with
//! `vine snapshot restore`. Without the variable those print SKIPPED.

use super::*;

const PNG: &[u8] = include_bytes!("../../../../converters/forest-convert/tests/data/team_photo-2026.png");

/// The reference engine's bin directory, or a SKIPPED line.
pub fn reference_bin(test: &str) -> Option<PathBuf> {
    match std::env::var("FOREST_TEST_MONKEYLLM") {
        Ok(p) if !p.is_empty() && Path::new(&p).join("vine").is_file() => Some(PathBuf::from(p)),
        Ok(p) if !p.is_empty() => panic!("FOREST_TEST_MONKEYLLM={p} has no `vine`"),
        _ => {
            let _ = test;
            forest_testkit::skip(
                "FOREST_TEST_MONKEYLLM is not set (the reference engine: bash ops/monkeyllm/install.sh)",
            );
            None
        }
    }
}

/// Run the reference CLI (no LLM endpoint: nothing curates).
pub fn vine(bin: &Path, args: &[&str]) -> Output {
    Command::new(bin.join("vine"))
        .args(args)
        .env_remove("MONKEYLLM_LLM_ENDPOINT")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .unwrap()
}

pub fn ok(o: &Output, what: &str) {
    assert_eq!(
        code(o),
        0,
        "{what}: stdout {} stderr {}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A small mixed source: prose, a table (dataset payload), JSON, an image.
pub fn mixed_source(dir: &Path) -> PathBuf {
    let src = dir.join("src");
    for (rel, bytes) in [
        ("notes/plan.md", &b"# Plan\n\nShip the snapshot on Tuesday.\n"[..]),
        ("notes/raw.txt", b"Raw minutes of the kickoff meeting.\n"),
        ("sales/sales.csv", b"region,amount\nnorth,10\nsouth,20\n"),
        ("config.json", b"{\"retention_days\": 30}\n"),
        ("photo.png", PNG),
    ] {
        let p = src.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    src
}

/// Forest-relative payload files (what a snapshot must carry), sorted.
pub fn payloads_in(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(root)
        .into_iter()
        .filter_entry(|e| !matches!(e.file_name().to_str(), Some(".git" | "_derived")))
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().strip_prefix(root).unwrap().to_string_lossy().into_owned())
        .filter(|r| r.ends_with(".db") || r.ends_with(".sqlite") || r.split('/').any(|c| c == "_assets"))
        .filter(|r| !r.split('/').any(|c| c.starts_with('.')))
        .collect();
    out.sort();
    out
}

fn assert_same_forest(a: &Path, b: &Path, payloads: &[String]) {
    assert_eq!(git(b, &["rev-parse", "HEAD"]), git(a, &["rev-parse", "HEAD"]));
    assert_eq!(git(b, &["rev-parse", "HEAD^{tree}"]), git(a, &["rev-parse", "HEAD^{tree}"]));
    assert_eq!(git(b, &["status", "--porcelain", "--untracked-files=no"]), "");
    fsck(b);
    for p in payloads {
        assert_eq!(fs::read(b.join(p)).unwrap(), fs::read(a.join(p)).unwrap(), "payload {p}");
    }
}

fn adopted(dir: &Path) -> PathBuf {
    let root = init(dir);
    let src = mixed_source(dir);
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--archive", "always"]);
    ok(&o, "adopt");
    root
}

#[test]
fn snapshot_round_trip_restores_history_payloads_and_assets() {
    let d = tempfile::tempdir().unwrap();
    let root = adopted(d.path());
    let payloads = payloads_in(&root);
    assert!(payloads.iter().any(|p| p.ends_with(".db")), "a dataset payload: {payloads:?}");
    assert!(payloads.iter().any(|p| p.contains("_assets/")), "an archived original: {payloads:?}");
    let snap = d.path().join("acme.forest");
    let o = run(&["snapshot", "create", snap.to_str().unwrap(), "--forest", &f(&root), "--json"]);
    ok(&o, "snapshot create");
    let c: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(c["payloads"], payloads.len());
    assert_eq!(c["bytes"], fs::metadata(&snap).unwrap().len());

    let dest = d.path().join("restored");
    let o = run(&["snapshot", "restore", snap.to_str().unwrap(), dest.to_str().unwrap(), "--json"]);
    ok(&o, "snapshot restore");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (r["format"].as_str(), r["restored_payloads"].as_u64()),
        (Some("container"), Some(payloads.len() as u64))
    );
    assert_eq!(r["payloads_missing"], 0);
    assert_eq!(r["head"].as_str().unwrap(), git(&root, &["rev-parse", "HEAD"]).trim());
    assert_same_forest(&root, &dest, &payloads);
    // The derived layer was rebuilt: the restored forest answers a search.
    let o = run(&["locate", "--forest", &f(&dest), "--json", "sales", "region"]);
    ok(&o, "locate");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["results"].as_array().unwrap().iter().any(|x| x["id"].as_str().unwrap().contains("sales")), "{v}");
    assert_eq!(code(&run(&["validate", "--forest", &f(&dest)])), code(&run(&["validate", "--forest", &f(&root)])));

    // --no-payloads says what it left out; the restore counts the dead nodes.
    let bare = d.path().join("bare.forest");
    let o = run(&["snapshot", "create", bare.to_str().unwrap(), "--forest", &f(&root), "--no-payloads"]);
    ok(&o, "snapshot create --no-payloads");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("left out: {} payload file(s)", payloads.len())));
    let o = run(&["snapshot", "restore", bare.to_str().unwrap(), d.path().join("dead").to_str().unwrap()]);
    ok(&o, "restore --no-payloads snapshot");
    assert!(String::from_utf8_lossy(&o.stderr).contains("node(s) name a payload this snapshot did not carry"));
}

#[test]
fn snapshot_errors_are_one_line_with_exit_codes() {
    let d = tempfile::tempdir().unwrap();
    let root = adopted(d.path());
    let snap = d.path().join("acme.forest");
    ok(&run(&["snapshot", "create", snap.to_str().unwrap(), "--forest", &f(&root)]), "create");
    let bytes = fs::read(&snap).unwrap();
    let cut = d.path().join("cut.forest");
    fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let dest = d.path().join("dest");
    let o = run(&["snapshot", "restore", cut.to_str().unwrap(), dest.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("forest: E_DAMAGED: ") && err.contains("truncated"), "{err}");
    assert!(!dest.exists());
    // A non-empty target is refused.
    let o = run(&["snapshot", "restore", snap.to_str().unwrap(), root.to_str().unwrap()]);
    assert_eq!(code(&o), 1);
    assert!(String::from_utf8_lossy(&o.stderr).contains("E_TARGET_NOT_EMPTY"));
    // Another writer holds the lock: 11, like every writer command.
    let lock = forest_git::WriterLock::acquire(&root).unwrap();
    let o = run(&["snapshot", "create", d.path().join("x.forest").to_str().unwrap(), "--forest", &f(&root)]);
    assert_eq!(code(&o), 11, "{}", String::from_utf8_lossy(&o.stderr));
    drop(lock);
    // Not a forest: 10.
    let o = run(&["snapshot", "create", "--forest", d.path().join("src").to_str().unwrap()]);
    assert_eq!(code(&o), 10);
}

#[test]
fn reference_snapshot_restores_with_forest() {
    let Some(bin) = reference_bin("reference_snapshot_restores_with_forest") else { return };
    let d = tempfile::tempdir().unwrap();
    let src = mixed_source(d.path());
    let refroot = d.path().join("ref");
    ok(&vine(&bin, &["init", "--forest", refroot.to_str().unwrap(), "--title", "Ref"]), "vine init");
    ok(&vine(&bin, &["adopt", src.to_str().unwrap(), "--forest", refroot.to_str().unwrap()]), "vine adopt");
    // An archived original under a branch's _assets/ travels too.
    fs::create_dir_all(refroot.join("notes/_assets")).unwrap();
    fs::write(refroot.join("notes/_assets/scan.png"), PNG).unwrap();
    let payloads = payloads_in(&refroot);
    assert!(payloads.len() >= 2, "{payloads:?}");
    let snap = d.path().join("ref.forest");
    let o = vine(&bin, &["snapshot", "create", snap.to_str().unwrap(), "--forest", refroot.to_str().unwrap()]);
    ok(&o, "vine snapshot create");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{} payload(s)", payloads.len())));

    let dest = d.path().join("restored");
    let o = run(&["snapshot", "restore", snap.to_str().unwrap(), dest.to_str().unwrap(), "--json"]);
    ok(&o, "forest snapshot restore of a reference snapshot");
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["restored_payloads"], payloads.len());
    assert_eq!(r["payloads_missing"], 0);
    assert_same_forest(&refroot, &dest, &payloads);
}

#[test]
fn forest_snapshot_restores_with_the_reference() {
    let Some(bin) = reference_bin("forest_snapshot_restores_with_the_reference") else { return };
    let d = tempfile::tempdir().unwrap();
    let root = adopted(d.path());
    let payloads = payloads_in(&root);
    let snap = d.path().join("ours.forest");
    ok(&run(&["snapshot", "create", snap.to_str().unwrap(), "--forest", &f(&root)]), "forest snapshot create");
    let dest = d.path().join("restored");
    let o = vine(&bin, &["snapshot", "restore", snap.to_str().unwrap(), "--forest", dest.to_str().unwrap()]);
    ok(&o, "vine snapshot restore of our snapshot");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("(+{} payload(s))", payloads.len())), "{out}");
    assert!(!out.contains("did not carry"), "{out}");
    assert_same_forest(&root, &dest, &payloads);
}
