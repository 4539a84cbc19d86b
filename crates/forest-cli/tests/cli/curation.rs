//! Curation that fits a real drive (issue 35): a dead endpoint costs a
//! curated adopt a line or two and no time, every node stays pending and
//! the next run curates it.

use super::*;
use forest_model::node::Node;
use forest_model::scent::summary_fingerprint;

/// `http://127.0.0.1:PORT/v1` with nothing listening on PORT.
fn closed_port_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}/v1")
}

fn node(root: &Path, id: &str) -> Node {
    Node::parse(&fs::read_to_string(root.join(format!("{id}.md"))).unwrap()).unwrap()
}

/// What `forest curate --pending` picks up: ingested, derived scent, the
/// summary as the Gardener wrote it.
fn is_pending(n: &Node) -> bool {
    let summary = n.get_str("summary").unwrap_or_default();
    n.get_str("source").as_deref() == Some("ingest")
        && n.get_str("scent").as_deref() == Some("derived")
        && n.get_str("scent_hash").as_deref() == Some(summary_fingerprint(&summary).as_str())
}

/// `forest adopt SRC --curate --json` against `url`; (report, stderr).
fn curated_adopt(root: &Path, src: &Path, url: &str) -> (serde_json::Value, String) {
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", url)
        .env_remove("FOREST_LOG")
        .args(["adopt", "--forest", &f(root), src.to_str().unwrap(), "--curate", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(code(&o), 0, "{err}");
    (serde_json::from_slice(&o.stdout).unwrap(), err)
}

fn planted(v: &serde_json::Value) -> Vec<String> {
    v["sources"][0]["planted"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect()
}

/// The acceptance check of a curated adopt with nothing listening: at most
/// three plain lines on stderr, every node planted and pending, nothing
/// rolled up.
fn adopt_against_a_closed_port(root: &Path, src: &Path, expect: usize) -> Vec<String> {
    let (v, err) = curated_adopt(root, src, &closed_port_url());
    assert!(err.lines().count() <= 3, "at most 3 lines on stderr:\n{err}");
    assert!(!err.contains('\x1b'), "no ANSI escapes into a pipe: {err:?}");
    assert!(err.contains("forest curate --pending"), "the one line says what to do: {err}");
    let ids = planted(&v);
    assert_eq!(ids.len(), expect);
    for id in &ids {
        assert!(is_pending(&node(root, id)), "{id} is pending");
    }
    let fallbacks = v["sources"][0]["curation_fallbacks"].as_array().unwrap().len();
    assert_eq!(fallbacks, expect, "every node is listed as a curation fallback");
    let c = &v["curation"];
    assert_eq!(c["llm_summaries"], 0);
    assert!(c["offline_skips"].as_u64().unwrap() > 0, "{c}");
    assert!(v["rollup"].is_null(), "nothing to roll up offline: {v}");
    ids
}

#[test]
fn a_dead_endpoint_costs_a_curated_adopt_one_line_and_leaves_every_node_pending() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    assert_eq!(dump_all(&src), 100);
    adopt_against_a_closed_port(&root, &src, 100);
    let o = run(&["validate", "--forest", &f(&root)]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stdout));
}

/// Then the endpoint comes up (the real small model): the next run
/// curates what the dead one left pending.
#[test]
fn the_next_run_curates_what_a_dead_endpoint_left_pending() {
    let Ok(url) = std::env::var("FOREST_TEST_LLM_URL") else {
        forest_testkit::skip("FOREST_TEST_LLM_URL is not set (the llama.cpp server: ops/llm/start.sh)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    let picked = dump_shortest(&src);
    let ids = adopt_against_a_closed_port(&root, &src, picked);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", &url)
        .env("MONKEYLLM_LLM_MAX_TOKENS", "160")
        .args(["curate", "--pending", "--forest", &f(&root), "--json"])
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    println!("curate --pending after the endpoint came up: {r}");
    assert_eq!(r["pending"], picked, "every node left by the dead endpoint is retried");
    let curated: Vec<&str> = r["curated"].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
    // Whether the small test model's candidates beat the derived scent is
    // the model's business (with SmolLM2-135M they often do not, and the
    // derived scent is kept): every node is either curated or still pending.
    let still = r["still_pending"].as_array().unwrap().len();
    assert_eq!(curated.len() + still, picked, "{r}");
    for id in &ids {
        let n = node(&root, id);
        let llm = n.get_str("scent").as_deref() == Some("llm");
        assert_eq!(llm, curated.contains(&id.as_str()), "{id}");
        assert_eq!(is_pending(&n), !llm, "{id}: curated or still pending");
    }
}

/// A scripted model that answers well: a leaf's summary is the first line
/// of its content (grounded, says more than the names), a rollup a fixed
/// grounded synthesis, proposals nothing.
fn well_behaved(_: usize, req: &llm_support::Request) -> llm_support::Step {
    let msgs = req.messages();
    let text = |i: usize| msgs.get(i).and_then(|m| m["content"].as_str()).unwrap_or("").to_string();
    if text(0).starts_with("A new node was added") {
        return llm_support::chat(r#"{"related": []}"#);
    }
    if text(0).contains("REGION") {
        return llm_support::summary("Garden notes on vegetables, seedlings and greenhouse crops by season.", &[]);
    }
    let user = text(1);
    let content = user.split("Content:\n").nth(1).unwrap_or("");
    let line = content.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("");
    llm_support::summary(line, &[])
}

fn garden_file(src: &Path, rel: &str, sentence: &str) {
    let p = src.join(rel);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, format!("# {rel}\n\n{sentence}\n")).unwrap();
}

fn branch_requests(server: &llm_support::Server) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.messages().first().and_then(|m| m["content"].as_str()).is_some_and(|c| c.contains("REGION")))
        .count()
}

/// A curated sync of new files into an existing forest rolls up the
/// changed ancestors only, deepest first.
#[test]
fn a_curated_sync_rolls_up_only_the_changed_ancestors() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    let crops = ["tomatoes ripen late", "peppers need warmth", "cucumbers climb nets", "beans fix nitrogen"];
    for (i, c) in crops.iter().enumerate() {
        garden_file(&src, &format!("beds/bed-{i}.md"), &format!("In the raised beds {c} every summer."));
        garden_file(&src, &format!("orchard/tree-{i}.md"), &format!("In the orchard {c} beside the apples."));
    }
    let first = llm_support::Server::with(std::time::Duration::ZERO, well_behaved);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", first.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .env("FOREST_LLM_CONCURRENCY", "2")
        .args(["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--name", "garden", "--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let ingest_branches: Vec<String> = walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name() == "_index.md" && !e.path().starts_with(root.join(".git")))
        .map(|e| e.path().strip_prefix(&root).unwrap().to_str().unwrap().trim_end_matches(".md").to_string())
        .filter(|id| node(&root, id).get_str("source").as_deref() == Some("ingest"))
        .collect();
    assert!(ingest_branches.len() >= 2, "{ingest_branches:?}");

    for (i, c) in crops.iter().enumerate().take(3) {
        garden_file(&src, &format!("beds/seedlings/tray-{i}.md"), &format!("Under glass the seedlings of {c} early."));
    }
    // No cached rollup may hide a request: every branch rolled up costs one.
    let _ = fs::remove_file(root.join("_derived/curation.db"));
    let second = llm_support::Server::with(std::time::Duration::ZERO, well_behaved);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", second.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .env("FOREST_LLM_CONCURRENCY", "2")
        .args(["sync", "--forest", &f(&root), "--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let new = planted(&v);
    assert_eq!(new.len(), 3, "{v}");
    // The changed ancestors: every branch above a new leaf that the rollup
    // may rewrite (ingested).
    let changed = changed_ancestors(&root, &new);
    assert!(!changed.is_empty() && changed.len() < ingest_branches.len() + 1, "{changed:?} of {ingest_branches:?}");
    assert_eq!(branch_requests(&second), changed.len(), "one rollup request per changed ancestor, no more");
    let rolled: Vec<String> =
        v["rollup"]["rolled"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    assert!(rolled.iter().all(|b| changed.contains(b)), "{rolled:?} ⊄ {changed:?}");
    let depth = |id: &String| id.matches('/').count();
    assert!(rolled.windows(2).all(|w| depth(&w[0]) >= depth(&w[1])), "deepest first: {rolled:?}");
    let untouched: Vec<&String> = ingest_branches.iter().filter(|b| !changed.contains(b)).collect();
    assert!(!untouched.is_empty(), "the orchard's branch is not an ancestor of the new files");
}

/// The ingested branches above `new` leaves (those a rollup may rewrite),
/// each once, nearest first per leaf.
fn changed_ancestors(root: &std::path::Path, new: &[String]) -> Vec<String> {
    let mut changed: Vec<String> = vec![];
    for id in new {
        let mut cur = forest_model::ids::parent_index(id);
        while let Some(p) = cur {
            if node(root, &p).get_str("source").as_deref() == Some("ingest") && !changed.contains(&p) {
                changed.push(p.clone());
            }
            cur = forest_model::ids::parent_index(&p);
        }
    }
    changed
}

/// A curated adopt of new files into an existing forest (a second source
/// rooted under one of the first source's branches) rolls up the new
/// files' changed ancestors only, deepest first: one request each.
#[test]
fn a_curated_adopt_into_an_existing_forest_rolls_up_only_the_changed_ancestors() {
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let src = d.path().join("src");
    let crops = ["tomatoes ripen late", "peppers need warmth", "cucumbers climb nets"];
    for (i, c) in crops.iter().enumerate() {
        garden_file(&src, &format!("beds/bed-{i}.md"), &format!("In the raised beds {c} every summer."));
        garden_file(&src, &format!("orchard/tree-{i}.md"), &format!("In the orchard {c} beside the apples."));
    }
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--name", "garden", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let bed = planted(&v).into_iter().find(|id| id.contains("bed-0")).unwrap();
    let beds = forest_model::ids::parent_index(&bed).unwrap();
    let dest = forest_model::ids::folder_of(&beds).to_string();

    let nursery = d.path().join("nursery");
    for (i, c) in crops.iter().enumerate() {
        garden_file(&nursery, &format!("trays/tray-{i}.md"), &format!("Under glass the seedlings of {c} early."));
    }
    let server = llm_support::Server::with(std::time::Duration::ZERO, well_behaved);
    let o = bin()
        .env("MONKEYLLM_LLM_ENDPOINT", server.url())
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .env("FOREST_LLM_CONCURRENCY", "2")
        .args(["adopt", "--forest", &f(&root), nursery.to_str().unwrap(), "--name", "nursery", "--dest", &dest])
        .args(["--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let new = planted(&v);
    assert_eq!(new.len(), 3, "{v}");
    let changed = changed_ancestors(&root, &new);
    assert!(changed.contains(&beds), "the existing branch the files went under is a changed ancestor: {changed:?}");
    assert_eq!(branch_requests(&server), changed.len(), "one rollup request per changed ancestor: {changed:?}");
    let rolled: Vec<String> =
        v["rollup"]["rolled"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    assert!(rolled.iter().all(|b| changed.contains(b)), "{rolled:?} ⊄ {changed:?}");
    assert!(!rolled.iter().any(|b| b.contains("orchard")), "the orchard did not change: {rolled:?}");
    let depth = |id: &String| id.matches('/').count();
    assert!(rolled.windows(2).all(|w| depth(&w[0]) >= depth(&w[1])), "deepest first: {rolled:?}");
}
