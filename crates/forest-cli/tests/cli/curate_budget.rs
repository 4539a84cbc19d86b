//! A curation budget spent by demand (issue 35): `forest curate --budget`
//! curates the hottest derived leaves first, stops at the budget (documents
//! or wall time), reports what is left, and the next run continues without
//! re-curating anything. Against a scripted OpenAI-compatible server, and
//! briefly against the real small model (`FOREST_TEST_LLM_URL`).

use super::*;
use forest_model::node::Node;
use serde_json::Value;
use std::collections::BTreeSet;
use std::time::Duration;

/// File stem -> the sentence the scripted model will return as its summary.
const DOCS: [(&str, &str); 8] = [
    ("almond", "Almond orchards need pollinators during the short bloom."),
    ("birch", "Birch sap is tapped in early spring before the buds open."),
    ("cedar", "Cedar shingles resist rot without any chemical treatment."),
    ("dahlia", "Dahlia tubers are lifted after frost and stored dry."),
    ("elder", "Elderflower cordial is brewed from blossoms picked at noon."),
    ("fennel", "Fennel bulbs swell when the soil stays moist and cool."),
    ("ginkgo", "Ginkgo trees tolerate city smog and compacted ground."),
    ("hazel", "Hazel coppice is cut in rotation for poles and hurdles."),
];

/// A model that answers well: a leaf's summary is the first line of its
/// content (grounded, says more than the names); proposals: none.
fn well_behaved(_: usize, req: &llm_support::Request) -> llm_support::Step {
    let msgs = req.messages();
    let text = |i: usize| msgs.get(i).and_then(|m| m["content"].as_str()).unwrap_or("").to_string();
    if text(0).starts_with("A new node was added") {
        return llm_support::chat(r#"{"related": []}"#);
    }
    let user = text(1);
    let content = user.split("Content:\n").nth(1).unwrap_or("");
    let line = content.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("");
    llm_support::summary(line, &[])
}

/// Summary requests a server saw, by the document sentence they carried.
fn summarised(server: &llm_support::Server) -> Vec<&'static str> {
    server
        .requests()
        .iter()
        .filter(|r| !r.messages().first().and_then(|m| m["content"].as_str()).unwrap_or("").starts_with("A new node"))
        .filter_map(|r| {
            let user = r.messages().get(1).and_then(|m| m["content"].as_str()).unwrap_or("").to_string();
            DOCS.iter().find(|(_, s)| user.contains(s)).map(|(stem, _)| *stem)
        })
        .collect()
}

/// An adopted (uncurated) forest of [`DOCS`]; stem -> id.
fn adopted(dir: &Path) -> (PathBuf, Vec<(String, String)>) {
    let root = init(dir);
    let src = dir.join("src");
    for (stem, sentence) in DOCS {
        let p = src.join("plants").join(format!("{stem}.md"));
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, format!("# {stem}\n\n{sentence}\n")).unwrap();
    }
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--name", "garden", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let planted: Vec<String> =
        v["sources"][0]["planted"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    let ids = DOCS
        .iter()
        .map(|(stem, _)| {
            let id = planted.iter().find(|id| id.ends_with(&format!("/{stem}"))).unwrap_or_else(|| panic!("{stem}"));
            (stem.to_string(), id.clone())
        })
        .collect();
    (root, ids)
}

fn id_of<'a>(ids: &'a [(String, String)], stem: &str) -> &'a str {
    &ids.iter().find(|(s, _)| s == stem).unwrap().1
}

fn stems(ids: &[(String, String)], v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| ids.iter().find(|(_, id)| id == x.as_str().unwrap()).unwrap().0.clone())
        .collect()
}

fn set(s: &[&str]) -> BTreeSet<String> {
    s.iter().map(|x| x.to_string()).collect()
}

/// `forest curate --budget B --json` against `url`.
fn curate(root: &Path, url: &str, budget: &str) -> Value {
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", url)
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .env("FOREST_LLM_CONCURRENCY", "1")
        .args(["curate", "--pending", "--budget", budget, "--forest", &f(root), "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn health_scent(root: &Path) -> Value {
    let o = run(&["health", "--forest", &f(root), "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    v["scent"].clone()
}

/// Heat the way the product lays it: `forest heat deposit` (shared heat,
/// as a hunt's close deposits) and `forest pick` (a traced open).
fn give_demand(root: &Path, ids: &[(String, String)]) {
    for (stem, amount) in [("elder", "0.9"), ("birch", "0.6"), ("fennel", "0.3")] {
        let o = run(&["heat", "deposit", "--forest", &f(root), id_of(ids, stem), "--amount", amount]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    }
    for _ in 0..2 {
        let o = run(&["pick", "--forest", &f(root), id_of(ids, "cedar")]);
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    }
}

#[test]
fn a_budget_curates_the_hottest_derived_leaves_first_and_the_next_run_continues() {
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    assert_eq!(health_scent(&root), serde_json::json!({"curated": 0, "derived": 8, "pending": 8}));
    give_demand(&root, &ids);

    let first = llm_support::Server::with(Duration::ZERO, well_behaved);
    let r = curate(&root, &first.url(), "2");
    assert_eq!(r["pending"], 8, "{r}");
    assert_eq!(stems(&ids, &r["curated"]), set(&["elder", "birch"]), "the two hottest: {r}");
    assert_eq!(r["kept_derived"].as_array().unwrap().len(), 0, "{r}");
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), (6.into(), "budget".into()), "{r}");
    assert_eq!(r["commits"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(summarised(&first), ["elder", "birch"], "two documents sent, hottest first");
    let hot: Vec<Vec<u8>> =
        ["elder", "birch"].iter().map(|s| fs::read(root.join(format!("{}.md", id_of(&ids, s)))).unwrap()).collect();
    let n = Node::parse(&String::from_utf8(hot[0].clone()).unwrap()).unwrap();
    assert_eq!(n.get_str("scent").as_deref(), Some("llm"));
    assert_eq!(n.get_str("summary").as_deref(), Some(DOCS[4].1));
    assert_eq!(health_scent(&root), serde_json::json!({"curated": 2, "derived": 6, "pending": 6}));

    // The next run takes the next in demand (heat 0.3, then two opens) and
    // never the first two again.
    let second = llm_support::Server::with(Duration::ZERO, well_behaved);
    let r = curate(&root, &second.url(), "2");
    assert_eq!(r["pending"], 6, "{r}");
    assert_eq!(stems(&ids, &r["curated"]), set(&["fennel", "cedar"]), "{r}");
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), (4.into(), "budget".into()), "{r}");
    assert_eq!(summarised(&second), ["fennel", "cedar"]);
    for (s, before) in ["elder", "birch"].iter().zip(&hot) {
        assert_eq!(&fs::read(root.join(format!("{}.md", id_of(&ids, s)))).unwrap(), before, "{s} not re-curated");
    }

    // A budget larger than what is left: every leaf, `done`.
    let third = llm_support::Server::with(Duration::ZERO, well_behaved);
    let r = curate(&root, &third.url(), "40");
    assert_eq!(stems(&ids, &r["curated"]), set(&["almond", "dahlia", "ginkgo", "hazel"]), "{r}");
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), (0.into(), "done".into()), "{r}");
    assert_eq!(health_scent(&root), serde_json::json!({"curated": 8, "derived": 0, "pending": 0}));
    let o = run(&["validate", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
    fsck(&root);
}

/// A time budget takes no new document once it has elapsed; the one in
/// flight finishes and is committed.
#[test]
fn a_duration_budget_stops_taking_documents_when_it_has_elapsed() {
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    give_demand(&root, &ids);
    // Each request takes 1.2 s, so one document (summary + proposals)
    // outlasts the 1 s budget.
    let slow = llm_support::Server::with(Duration::from_millis(1200), well_behaved);
    let started = std::time::Instant::now();
    let r = curate(&root, &slow.url(), "1s");
    assert_eq!(stems(&ids, &r["curated"]), set(&["elder"]), "the hottest, then the clock ran out: {r}");
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), (7.into(), "time".into()), "{r}");
    assert_eq!(summarised(&slow), ["elder"]);
    assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    let n = Node::parse(&fs::read_to_string(root.join(format!("{}.md", id_of(&ids, "elder")))).unwrap()).unwrap();
    assert_eq!(n.get_str("scent").as_deref(), Some("llm"), "the document in flight was committed");
    assert!(git(&root, &["log", "-1", "--format=%s"]).starts_with("gardener(curate): 1 pending"));
}

/// A leaf handed to the model that kept its derived scent loses its place
/// at the head (its attempt is remembered); a dead endpoint stops the run
/// (`offline`) and counts as no attempt.
#[test]
fn a_kept_derived_leaf_yields_its_turn_and_a_dead_endpoint_costs_no_turn() {
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    give_demand(&root, &ids);

    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", closed_port_url())
        .args(["curate", "--pending", "--budget", "5", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 3, "{}", String::from_utf8_lossy(&o.stderr));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), (8.into(), "offline".into()), "{r}");
    assert_eq!(r["curated"].as_array().unwrap().len(), 0, "{r}");
    assert!(r["kept_derived"].as_array().unwrap().len() < 5, "it stopped asking: {r}");

    // A model that only repeats itself: the hottest leaf keeps its derived scent.
    let looping = llm_support::Server::with(Duration::ZERO, |_, req| {
        if req.messages().first().and_then(|m| m["content"].as_str()).unwrap_or("").starts_with("A new node") {
            return llm_support::chat(r#"{"related": []}"#);
        }
        llm_support::summary("Sap sap sap sap sap sap sap sap.", &[])
    });
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", looping.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .args(["curate", "--pending", "--budget", "1", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(code(&o), 3, "a kept-derived leaf is a partial run: {r}");
    assert_eq!(stems(&ids, &r["kept_derived"]), set(&["elder"]), "the dead endpoint cost elder no turn: {r}");
    assert_eq!(r["left"], 8, "{r}");

    // Next run: elder (0.9 heat, tried once: 0.45) yields to birch (0.6).
    let good = llm_support::Server::with(Duration::ZERO, well_behaved);
    let r = curate(&root, &good.url(), "1");
    assert_eq!(stems(&ids, &r["curated"]), set(&["birch"]), "{r}");
    assert_eq!(summarised(&good), ["birch"]);
}

/// `http://127.0.0.1:PORT/v1` with nothing listening on PORT.
fn closed_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/v1")
}

/// `curation:` in `_meta/ranger.yaml`: `forest ranger run` spends the
/// budget after its pass when an endpoint is configured, and says why not
/// when none is.
#[test]
fn a_ranger_run_spends_the_curation_budget_of_ranger_yaml() {
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    give_demand(&root, &ids);
    fs::write(root.join("_meta/ranger.yaml"), "half_life_days: 30\ncuration: { budget: 1 }\n").unwrap();

    let o = run(&["ranger", "run", "--forest", &f(&root), "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["curation"].is_null(), "{v}");
    assert!(v["curation_skipped"].as_str().unwrap().contains("no LLM endpoint"), "{v}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("curation skipped"));
    assert_eq!(health_scent(&root)["pending"], 8);

    let server = llm_support::Server::with(Duration::ZERO, well_behaved);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", server.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .args(["ranger", "run", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["curation"];
    assert_eq!(stems(&ids, &c["curated"]), set(&["elder"]), "{v}");
    assert_eq!((c["left"].clone(), c["stopped_by"].clone()), (7.into(), "budget".into()), "{c}");
    assert_eq!(summarised(&server), ["elder"]);
    assert_eq!(health_scent(&root), serde_json::json!({"curated": 1, "derived": 7, "pending": 7}));
    // The block is versioned with the Ranger's commit like the rest of the file.
    assert!(git(&root, &["show", "HEAD~1:_meta/ranger.yaml"]).contains("curation"));

    // A typo in the block fails the run before anything is committed.
    fs::write(root.join("_meta/ranger.yaml"), "curation: { budgte: 1 }\n").unwrap();
    let o = run(&["ranger", "run", "--forest", &f(&root), "--json"]);
    assert_ne!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stderr).contains("budgte"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The daemon spends the budget after each run, under its own lock.
#[test]
fn the_ranger_daemon_spends_the_curation_budget_after_each_run() {
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    give_demand(&root, &ids);
    fs::write(root.join("_meta/ranger.yaml"), "curation: { budget: 1 }\n").unwrap();
    let server = llm_support::Server::with(Duration::ZERO, well_behaved);
    let child = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", server.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .args(["ranger", "daemon", "--forest", &f(&root), "--schedule", "* * * * * *"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(3500));
    unsafe {
        libc_kill(child.id() as i32, 15);
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let runs = err.lines().filter(|l| l.starts_with("ranger: curation ") && l.contains(": 1 curated")).count();
    assert!(runs >= 1, "a curation after a run: {err}");
    let curated = health_scent(&root)["curated"].as_u64().unwrap() as usize;
    assert_eq!(curated, runs, "one leaf per run: {err}");
    // Hottest first: elder, birch, fennel, cedar, then the cold ones.
    let order = ["elder", "birch", "fennel", "cedar"];
    let sent = summarised(&server);
    assert_eq!(sent.len(), curated, "{err}");
    assert_eq!(sent[..curated.min(4)], order[..curated.min(4)], "{err}");
    assert!(!root.join(".vine.lock").exists(), "lock released");
}

/// Bad budgets are usage errors, before anything is opened.
#[test]
fn a_bad_budget_is_refused() {
    for bad in ["0", "15x", "1.5h"] {
        let o = run(&["curate", "--pending", "--budget", bad, "--forest", "/nonexistent"]);
        assert_eq!(code(&o), 2, "{bad}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// The real small model, one document: the run completes and reports.
#[test]
fn a_budget_of_one_against_the_real_model() {
    let Ok(url) = std::env::var("FOREST_TEST_LLM_URL") else {
        forest_testkit::skip("FOREST_TEST_LLM_URL is not set (the llama.cpp server: ops/llm/start.sh)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let (root, ids) = adopted(d.path());
    give_demand(&root, &ids);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", &url)
        .env("MONKEYLLM_LLM_MAX_TOKENS", "160")
        .args(["curate", "--pending", "--budget", "1", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    let r: Value =
        serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    println!("curate --budget 1 against the real model: {r}");
    // Whether the 135M model's candidate beats the derived scent is the
    // model's business: the hottest leaf is curated or kept derived.
    let curated = r["curated"].as_array().unwrap().len();
    let kept = r["kept_derived"].as_array().unwrap().len();
    assert_eq!(curated + kept, 1, "exactly one document spent: {r}");
    let spent = if curated == 1 { &r["curated"] } else { &r["kept_derived"] };
    assert_eq!(stems(&ids, spent), set(&["elder"]), "the hottest leaf: {r}");
    assert_eq!(code(&o), if kept == 1 { 3 } else { 0 });
    assert_eq!((r["left"].clone(), r["stopped_by"].clone()), ((8 - curated).into(), "budget".into()), "{r}");
}
