//! The Canopy end to end (issue 31): `forest canopy build`, `locate
//! --hybrid`, and every writer keeping the canopy equal to a rebuild. Runs
//! the real embedding model (`FOREST_EMBED_MODEL`, ops/embed/install.sh).

use super::{bin, code, f, init};
use forest_canopy::{canopy_dir, Canopy};
use std::fs;
use std::path::Path;

fn model() -> Option<String> {
    match std::env::var("FOREST_EMBED_MODEL") {
        Ok(d) if !d.is_empty() => Some(d),
        _ => {
            forest_testkit::skip("FOREST_EMBED_MODEL unset (bash ops/embed/install.sh)");
            None
        }
    }
}

fn forest(root: &Path, args: &[&str], model: Option<&str>) -> std::process::Output {
    forest_env(root, args, model, &[])
}

/// (The writers' runs keep the fast tier unless a test names
/// `FOREST_CANOPY_FULL_IN_RUN_MAX`: most tests here are about the two
/// tiers, the fast one in the run.)
fn forest_env(root: &Path, args: &[&str], model: Option<&str>, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = bin();
    c.args(args).args(["--forest", &f(root)]).env(forest_canopy::IN_RUN_FULL_VAR, "0").envs(env.iter().copied());
    match model {
        Some(m) => c.env("FOREST_EMBED_MODEL", m),
        None => c.env_remove("FOREST_EMBED_MODEL"),
    };
    let o = c.output().unwrap();
    assert_eq!(code(&o), 0, "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The maintained canopy equals a fresh build over the same catalog (by
/// the encoder that built it).
fn assert_equals_rebuild(root: &Path, model: &str, step: &str) {
    let maintained = Canopy::load(&canopy_dir(root)).unwrap().unwrap();
    let encoder = if maintained.model.ends_with(forest_canopy::STATIC_SUFFIX) { "fast" } else { "full" };
    forest(root, &["canopy", "build", "--encoder", encoder], Some(model));
    let rebuilt = Canopy::load(&canopy_dir(root)).unwrap().unwrap();
    assert_eq!(maintained.ids, rebuilt.ids, "{step}: ids");
    assert_eq!(maintained.hashes, rebuilt.hashes, "{step}: texts");
    let d = maintained.vectors.iter().zip(&rebuilt.vectors).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
    assert!(d < 1e-4, "{step}: vectors differ by {d}");
}

fn locate(root: &Path, q: &str, extra: &[&str], model: Option<&str>) -> (serde_json::Value, String) {
    let mut args = vec!["locate", q, "--json"];
    args.extend(extra);
    let o = forest(root, &args, model);
    (serde_json::from_slice(&o.stdout).unwrap(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn without_a_canopy_hybrid_locate_is_bm25_with_a_note() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("pam.md"), "# PAM\n\nPluggable login modules.\n").unwrap();
    forest(&root, &["adopt", src.to_str().unwrap()], None);
    let (plain, _) = locate(&root, "login modules", &[], None);
    let (hybrid, err) = locate(&root, "login modules", &["--hybrid"], None);
    assert_eq!(plain["results"], hybrid["results"]);
    assert!(err.contains("BM25 only: no canopy"), "{err}");
    assert_eq!(hybrid["note"], "BM25 only: no canopy (forest canopy build)", "the JSON says why too");
    assert!(plain.get("note").is_none(), "no canopy and no fusion named: BM25, silently: {plain}");
    // `canopy search` has nothing to fall back to: one clear error
    let o = bin().args(["canopy", "search", "login", "--forest", &f(&root)]).output().unwrap();
    assert_ne!(code(&o), 0);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no canopy"), "{err}");
    assert_eq!(err.lines().filter(|l| !l.trim().is_empty()).count(), 1, "{err}");
}

#[test]
fn writers_keep_the_canopy_equal_to_a_rebuild() {
    let Some(m) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    fs::create_dir_all(src.join("docs")).unwrap();
    fs::write(src.join("docs/pam.md"), "# PAM\n\nConfiguring PAM for the login service.\n").unwrap();
    fs::write(src.join("docs/pango.md"), "# Pango\n\nPango lays out and renders internationalized text.\n").unwrap();
    fs::write(src.join("docs/zlib.md"), "# zlib\n\nzlib is a lossless data compression library.\n").unwrap();
    fs::write(src.join("docs/ssh.md"), "# OpenSSH\n\nSecure remote shell.\n").unwrap();
    forest(&root, &["adopt", src.to_str().unwrap()], Some(&m));
    // with the model installed, adopt leaves a canopy made by the fast encoder
    let fast = Canopy::load(&canopy_dir(&root)).unwrap().expect("adopt with a model builds the canopy");
    assert!(fast.model.ends_with(forest_canopy::STATIC_SUFFIX), "{}", fast.model);
    assert_eq!(fast.ids.len(), 7, "every catalog node, the master and _meta too: {:?}", fast.ids);
    assert_equals_rebuild(&root, &m, "adopt (fast encoder)");
    let (_, err) = locate(&root, "shrinking files without losing data", &[], Some(&m));
    assert!(!err.contains("BM25 only"), "the default locate reads the fast canopy: {err}");
    // the full model, on demand
    let o = forest(&root, &["canopy", "build", "--encoder", "full", "--json"], Some(&m));
    let b: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(b["nodes"].as_u64().unwrap() >= 5, "{b}");
    assert_eq!(b["dim"], 384);

    // hybrid finds by meaning what BM25 does not find by words
    let q = "shrinking files without losing data";
    let (hy, err) = locate(&root, q, &["--hybrid", "--scope", "notes"], Some(&m));
    assert!(!err.contains("BM25 only"), "{err}");
    assert_eq!(hy["results"][0]["id"].as_str().unwrap(), "docs/zlib", "{hy}");
    // `canopy search`: the vector ranking alone, best first, with similarities
    let o = forest(&root, &["canopy", "search", q, "-k", "3", "--json"], Some(&m));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let hits = v.as_array().unwrap();
    assert_eq!(hits.len(), 3, "{v}");
    assert_eq!(hits[0]["id"], "docs/zlib", "{v}");
    let sims: Vec<f64> = hits.iter().map(|h| h["similarity"].as_f64().unwrap()).collect();
    assert!(sims.windows(2).all(|w| w[0] >= w[1]) && sims[0] <= 1.0 + 1e-6, "{sims:?}");
    // the query's vector is memoised (K.6) under _derived/; a repeat answers alike
    let memo = forest_canopy::memo_path(&root);
    assert!(memo.is_file(), "the CLI persists the query memo");
    let (again, _) = locate(&root, q, &["--hybrid", "--scope", "notes"], Some(&m));
    assert_eq!(again, hy, "a memo hit answers as the encoder did");
    // a --readonly engine keeps its memo in process: no file appears
    for suffix in ["", "-wal", "-shm"] {
        let _ = fs::remove_file(format!("{}{suffix}", memo.display()));
    }
    {
        std::env::set_var("FOREST_EMBED_MODEL", &m);
        let owner = forest_vine::Vine::open(&root, forest_vine::VineOptions::default()).unwrap();
        let mut ro = forest_vine::Vine::open_worker(&root, owner.tracer(), false).unwrap();
        ro.set_fusion(forest_catalog::Fusion::Rrf);
        let out = ro.locate(&forest_vine::LocateArgs { query: q.into(), ..Default::default() }).unwrap();
        assert!(out.note.is_none(), "{out:?}");
        assert!(!memo.exists(), "a read-only engine wrote the memo file");
    }

    // adopt: a second source into a forest that has a canopy
    let src2 = d.path().join("src2");
    fs::create_dir_all(&src2).unwrap();
    fs::write(src2.join("tar.md"), "# tar\n\nGNU tar saves many files together into a single archive.\n").unwrap();
    forest(&root, &["adopt", src2.to_str().unwrap(), "--name", "more", "--dest", "more"], Some(&m));
    assert_equals_rebuild(&root, &m, "adopt");

    // sync: a changed, a moved and a deleted file
    fs::write(src.join("docs/pam.md"), "# PAM\n\nPluggable Authentication Modules.\n").unwrap();
    fs::create_dir_all(src.join("net")).unwrap();
    fs::rename(src.join("docs/ssh.md"), src.join("net/ssh.md")).unwrap();
    fs::remove_file(src.join("docs/pango.md")).unwrap();
    forest(&root, &["sync"], Some(&m));
    assert_equals_rebuild(&root, &m, "sync");

    // a Vine write
    {
        let mut vine =
            forest_vine::Vine::open(&root, forest_vine::VineOptions { writable: true, session: None }).unwrap();
        let node = serde_json::json!({"id": "docs/notes", "parent": "docs/_index", "title": "Notes", "type": "note",
            "summary": "Notes about compressing backups.", "body": "Text.",
            "links": [{"rel": "related-to", "target": "docs/zlib", "confidence": 0.3}]});
        std::env::set_var("FOREST_EMBED_MODEL", &m);
        vine.plant(&node, false, false).unwrap();
    }
    assert_equals_rebuild(&root, &m, "vine plant");

    // a Ranger run: it prunes the cold link the plant made and refreshes the
    // landmarks (one commit); the canopy follows, with the model or without
    let o = forest(&root, &["ranger", "run", "--json", "--now", "2099-01-01T00:00:00Z"], Some(&m));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["commit"].is_string(), "{r}");
    assert_eq!(r["links"]["pruned"], serde_json::json!(["docs/notes related-to->docs/zlib"]), "{r}");
    assert_equals_rebuild(&root, &m, "ranger run");
    {
        let mut vine =
            forest_vine::Vine::open(&root, forest_vine::VineOptions { writable: true, session: None }).unwrap();
        let node = serde_json::json!({"id": "docs/more-notes", "parent": "docs/_index", "title": "More notes",
            "type": "note", "summary": "Where the tape archives are kept.", "body": "Text.",
            "links": [{"rel": "related-to", "target": "docs/zlib", "confidence": 0.3}]});
        vine.plant(&node, false, false).unwrap();
    }
    let o = forest(&root, &["ranger", "run", "--json", "--now", "2099-01-02T00:00:00Z"], None);
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r["commit"].is_string(), "{r}");
    let st = forest(&root, &["canopy", "status", "--json"], Some(&m));
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["state"], "active", "a run that changed no scent leaves the canopy current: {st}");
    assert_equals_rebuild(&root, &m, "ranger run without the model");

    // a writer without the model marks the canopy stale; locate says so
    fs::write(src.join("docs/zlib.md"), "# zlib\n\nThe deflate library.\n").unwrap();
    forest(&root, &["sync"], None);
    let st = forest(&root, &["canopy", "status", "--json"], Some(&m));
    let st: serde_json::Value = serde_json::from_slice(&st.stdout).unwrap();
    assert_eq!(st["state"], "stale", "{st}");
    let (_, err) = locate(&root, q, &["--hybrid"], Some(&m));
    assert!(err.contains("BM25 only: the canopy is stale"), "{err}");
    forest(&root, &["canopy", "build"], Some(&m));
    let st = forest(&root, &["canopy", "status", "--json"], Some(&m));
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&st.stdout).unwrap()["state"], "active");
}

/// `DIR/src` with two short documents.
fn two_docs(dir: &Path) -> std::path::PathBuf {
    let src = dir.join("src");
    fs::create_dir_all(&src).unwrap();
    fs::write(src.join("zlib.md"), "# zlib\n\nzlib is a lossless data compression library.\n").unwrap();
    fs::write(src.join("pam.md"), "# PAM\n\nConfiguring PAM for the login service.\n").unwrap();
    src
}

/// The canopy's two tiers: adopt builds it with the fast encoder; a Ranger
/// run rebuilds it with the full model when the forest is within
/// `canopy_full_max_nodes`, and not when the limit says no.
#[test]
fn the_ranger_upgrades_a_fast_canopy_to_the_full_model() {
    let Some(m) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let src = two_docs(d.path());
    // a limit of 0: the fast canopy stays
    let off = init(&d.path().join("off"));
    fs::write(off.join("_meta/ranger.yaml"), "canopy_full_max_nodes: 0\n").unwrap();
    super::git(&off, &["add", "_meta/ranger.yaml"]);
    super::git(&off, &["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "ranger: no full canopy"]);
    forest(&off, &["adopt", src.to_str().unwrap()], Some(&m));
    let o = forest(&off, &["ranger", "run", "--json", "--now", "2099-01-01T00:00:00Z"], Some(&m));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r.get("canopy_upgraded").is_none(), "{r}");
    let kept = Canopy::load(&canopy_dir(&off)).unwrap().unwrap();
    assert!(kept.model.ends_with(forest_canopy::STATIC_SUFFIX), "{}", kept.model);
    // the default limit: the run embeds every node with the full model
    let root = init(&d.path().join("on"));
    forest(&root, &["adopt", src.to_str().unwrap()], Some(&m));
    let fast = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
    assert!(fast.model.ends_with(forest_canopy::STATIC_SUFFIX), "{}", fast.model);
    let o = forest(&root, &["ranger", "run", "--json", "--now", "2099-01-01T00:00:00Z"], Some(&m));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["canopy_upgraded"].as_u64(), Some(fast.ids.len() as u64), "{r}");
    let full = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
    assert!(!full.model.ends_with(forest_canopy::STATIC_SUFFIX), "{}", full.model);
    assert_eq!(full.ids, fast.ids);
    assert_equals_rebuild(&root, &m, "the full tier");
    // writers keep the full tier: a sync refreshes it with the full model
    fs::write(src.join("zlib.md"), "# zlib\n\nThe deflate library.\n").unwrap();
    forest(&root, &["sync"], Some(&m));
    let after = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
    assert_eq!(after.model, full.model);
    assert_equals_rebuild(&root, &m, "sync over the full tier");
    // and a second Ranger run has nothing to upgrade
    let o = forest(&root, &["ranger", "run", "--json", "--now", "2099-01-02T00:00:00Z"], Some(&m));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(r.get("canopy_upgraded").is_none(), "{r}");
}

/// A writer keeps a full-model canopy current with the full model for at
/// most `FOREST_CANOPY_FULL_REFRESH_MAX` changed scents; a larger change
/// (a big sync) rebuilds it with the fast encoder, and the next Ranger run
/// brings the full model back.
#[test]
fn a_sync_beyond_the_full_models_budget_rebuilds_the_canopy_fast() {
    let Some(m) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let src = two_docs(d.path());
    let root = init(&d.path().join("f"));
    forest(&root, &["adopt", src.to_str().unwrap()], Some(&m));
    forest(&root, &["canopy", "build", "--encoder", "full"], Some(&m));
    let full = Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model;
    assert!(!full.ends_with(forest_canopy::STATIC_SUFFIX), "{full}");
    let budget = forest_canopy::FULL_REFRESH_VAR;
    // one changed file (its scent and its branches') within a budget of
    // ten: the full model embeds them
    fs::write(src.join("zlib.md"), "# zlib\n\nThe deflate library.\n").unwrap();
    forest_env(&root, &["sync"], Some(&m), &[(budget, "10")]);
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, full);
    assert_equals_rebuild(&root, &m, "a sync within the budget");
    // two new files (and their scents) over a budget of one: the fast encoder
    fs::write(src.join("ssh.md"), "# OpenSSH\n\nSecure shell client and server.\n").unwrap();
    fs::write(src.join("tar.md"), "# tar\n\nThe tape archiver.\n").unwrap();
    forest_env(&root, &["sync"], Some(&m), &[(budget, "1")]);
    let fast = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
    assert!(fast.model.ends_with(forest_canopy::STATIC_SUFFIX), "{}", fast.model);
    assert!(fast.ids.iter().any(|i| i.ends_with("tar")), "{:?}", fast.ids);
    assert_equals_rebuild(&root, &m, "a sync beyond the budget");
    let (r, _) = locate(&root, "tape archiver", &[], Some(&m));
    assert!(r.get("note").is_none(), "the fast canopy answers: {r}");
    let st = String::from_utf8(forest(&root, &["canopy", "status"], Some(&m)).stdout).unwrap();
    assert_eq!(st.trim(), format!("canopy: active ({} vectors, model {})", fast.ids.len(), fast.model));
    // the full rows wait beside it, and the Ranger's night tier upgrades it
    // again embedding only the scents that changed since
    let kept = forest_canopy::kept_full_dir(&canopy_dir(&root));
    assert!(kept.join("vectors.f32").is_file());
    let o = forest(&root, &["ranger", "run", "--now", "2099-01-01T00:00:00Z"], Some(&m));
    let out = String::from_utf8(o.stdout).unwrap();
    let line = out.lines().find(|l| l.starts_with("canopy: rebuilt with the full model (")).unwrap_or_default();
    let embedded: usize = line.rsplit('(').next().and_then(|t| t.split(' ').next()?.parse().ok()).unwrap_or(0);
    assert!(embedded > 0 && embedded < fast.ids.len(), "{out}");
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, full);
    assert_equals_rebuild(&root, &m, "the upgrade over the kept rows");
    assert!(!kept.exists(), "the kept rows are gone once used");
    // an operator who asked for the full model in every run keeps it
    fs::write(src.join("ssh.md"), "# OpenSSH\n\nThe secure shell.\n").unwrap();
    fs::write(src.join("tar.md"), "# tar\n\nThe tape archive tool.\n").unwrap();
    forest_env(&root, &["sync"], Some(&m), &[(budget, "1"), ("FOREST_EMBED_ENCODER", "full")]);
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, full);
    assert_equals_rebuild(&root, &m, "a sync with the full encoder asked for");
    // a budget that is not a number is one warning; the default holds
    fs::write(src.join("tar.md"), "# tar\n\nThe GNU tape archiver.\n").unwrap();
    let o = forest_env(&root, &["sync"], Some(&m), &[(budget, "lots")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.matches(budget).count(), 1, "{err}");
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, full);
    assert_equals_rebuild(&root, &m, "a sync with a budget that is not a number");
}

/// `FOREST_CANOPY_FULL_IN_RUN_MAX`: an ingest run brings the canopy of a
/// forest within the limit (10,000 nodes by default) to the full model
/// itself; a forest over it, or an operator who asked for the fast encoder
/// or set the limit to 0, keeps the fast one for the Ranger's night.
#[test]
fn an_adopt_within_the_in_run_limit_builds_the_full_canopy() {
    let Some(m) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let src = two_docs(d.path());
    let limit = forest_canopy::IN_RUN_FULL_VAR;
    let adopted = |name: &str, env: &[(&str, &str)]| {
        let root = init(&d.path().join(name));
        let o = forest_env(&root, &["adopt", src.to_str().unwrap()], Some(&m), env);
        let c = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
        (root, c, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let is_fast = |c: &Canopy| c.model.ends_with(forest_canopy::STATIC_SUFFIX);
    let default = init(&d.path().join("default"));
    let mut c = bin();
    c.args(["adopt", src.to_str().unwrap(), "--forest", &f(&default)]).env("FOREST_EMBED_MODEL", &m);
    let o = c.env_remove(limit).output().unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let c = Canopy::load(&canopy_dir(&default)).unwrap().unwrap();
    assert!(!is_fast(&c), "a small forest gets the full model by default: {}", c.model);
    let (_, c, _) = adopted("off", &[(limit, "0")]);
    assert!(is_fast(&c), "a limit of 0: {}", c.model);
    let (_, c, _) = adopted("over", &[(limit, "1")]);
    assert!(is_fast(&c), "a forest over the limit: {}", c.model);
    let (_, c, _) = adopted("asked-fast", &[(limit, "100"), ("FOREST_EMBED_ENCODER", "fast")]);
    assert!(is_fast(&c), "the fast encoder asked for: {}", c.model);
    let (_, c, err) = adopted("not-a-number", &[(limit, "many")]);
    assert!(!is_fast(&c) && err.matches(limit).count() == 1, "one warning and the default: {err}");
    let (root, c, _) = adopted("within", &[(limit, "100")]);
    assert!(!is_fast(&c), "within the limit: {}", c.model);
    assert_equals_rebuild(&root, &m, "the adopt's full tier");
    // a sync over the refresh budget but within the limit keeps the full model
    fs::write(src.join("ssh.md"), "# OpenSSH\n\nSecure shell client and server.\n").unwrap();
    fs::write(src.join("tar.md"), "# tar\n\nThe tape archiver.\n").unwrap();
    forest_env(&root, &["sync"], Some(&m), &[(limit, "100"), (forest_canopy::FULL_REFRESH_VAR, "1")]);
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, c.model);
    assert_equals_rebuild(&root, &m, "a sync within the limit");
    assert!(!forest_canopy::kept_full_dir(&canopy_dir(&root)).exists(), "nothing set aside");
}

/// The Ranger's full-model pass runs before it takes the writer lock: its
/// staged rows wait in `_derived/canopy-full/` while writers go on, and
/// the run under the lock embeds only what they changed. A forest another
/// writer holds fails at once, without the long pass.
#[test]
fn the_ranger_stages_the_full_rows_before_it_takes_the_lock() {
    let Some(m) = model() else { return };
    let d = tempfile::tempdir().unwrap();
    let src = two_docs(d.path());
    let root = init(&d.path().join("f"));
    forest(&root, &["adopt", src.to_str().unwrap()], Some(&m));
    let kept = forest_canopy::kept_full_dir(&canopy_dir(&root));
    // locked by another writer: the run fails at once and stages nothing
    let lock = forest_git::WriterLock::acquire(&root).unwrap();
    let o = bin().args(["ranger", "run", "--forest", &f(&root)]).env("FOREST_EMBED_MODEL", &m).output().unwrap();
    assert_ne!(code(&o), 0, "a locked forest");
    assert!(!kept.exists(), "nothing staged for a run that could not follow");
    // the long pass needs no lock: staged while the lock is held
    let catalog = forest_catalog::Catalog::open_read_only(&root.join("_derived/catalog.db")).unwrap();
    // (FOREST_EMBED_MODEL is this process's own: model() read it)
    let staged = forest_canopy::stage_upgrade(&root, &catalog, 100).unwrap().unwrap();
    drop((lock, catalog));
    let fast = Canopy::load(&canopy_dir(&root)).unwrap().unwrap();
    assert_eq!(staged.embedded, fast.ids.len(), "every row through the full model");
    assert!(fast.model.ends_with(forest_canopy::STATIC_SUFFIX), "the live canopy is untouched: {}", fast.model);
    let rows = Canopy::load(&kept).unwrap().unwrap();
    assert!(!rows.model.ends_with(forest_canopy::STATIC_SUFFIX) && rows.ids == fast.ids, "{}", rows.model);
    // a writer meanwhile; the run embeds only its change
    fs::write(src.join("zlib.md"), "# zlib\n\nThe deflate library.\n").unwrap();
    forest(&root, &["sync"], Some(&m));
    let o = forest(&root, &["ranger", "run", "--json", "--now", "2099-01-01T00:00:00Z"], Some(&m));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let embedded = r["canopy_upgraded"].as_u64().unwrap_or(0) as usize;
    assert!(embedded > 0 && embedded < fast.ids.len(), "{r}");
    assert_eq!(Canopy::load(&canopy_dir(&root)).unwrap().unwrap().model, rows.model);
    assert_equals_rebuild(&root, &m, "the upgrade over the staged rows");
    assert!(!kept.exists(), "the staged rows are gone once used");
}
