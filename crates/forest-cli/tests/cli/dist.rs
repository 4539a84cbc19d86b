//! Distributed ingest (issue 16): workers fill a prepared store, one
//! committer commits. Against a scripted OpenAI-compatible server (a real
//! HTTP server on 127.0.0.1 whose answers are a pure function of the
//! request, so every run gets the same answers) and, for the S3 store, the
//! real moto server (`FOREST_TEST_S3_ENDPOINT`, skipped without it).

use super::s3::endpoint;
use super::*;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A deterministic chat server: summaries and rollups are derived from the
/// request text, proposals pick the first offered candidate.
pub(crate) struct Scripted {
    addr: std::net::SocketAddr,
    summaries: Arc<AtomicUsize>,
    total: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Scripted {
    pub(crate) fn start(delay: Duration) -> Scripted {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (summaries, total, stop) =
            (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
        let (s, t, st) = (summaries.clone(), total.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (s, t) = (s.clone(), t.clone());
                std::thread::spawn(move || serve(conn, delay, &s, &t));
            }
        });
        Scripted { addr, summaries, total, stop }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Leaf summary requests served.
    pub(crate) fn summaries(&self) -> usize {
        self.summaries.load(Ordering::SeqCst)
    }

    /// Chat requests served.
    pub(crate) fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(mut conn: TcpStream, delay: Duration, summaries: &AtomicUsize, total: &AtomicUsize) {
    let Ok(clone) = conn.try_clone() else { return };
    let mut r = BufReader::new(clone);
    let mut line = String::new();
    if r.read_line(&mut line).is_err() {
        return;
    }
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut len = 0usize;
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).unwrap_or(0) == 0 {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0u8; len];
    if r.read_exact(&mut body).is_err() {
        return;
    }
    let (code, reply) = if path.ends_with("/chat/completions") {
        total.fetch_add(1, Ordering::SeqCst);
        let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        std::thread::sleep(delay);
        (200, json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": answer(&req, summaries)}}]}))
    } else if path.ends_with("/models") {
        (200, json!({"data": [{"id": "test-model"}]}))
    } else {
        (404, json!({"error": "not here"}))
    };
    let text = reply.to_string();
    let _ = write!(
        conn,
        "HTTP/1.1 {code} Scripted\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = conn.flush();
}

/// The answer, as a function of the request alone.
fn answer(req: &Value, summaries: &AtomicUsize) -> String {
    let msgs = req["messages"].as_array().cloned().unwrap_or_default();
    let text = |i: usize| msgs.get(i).and_then(|m| m["content"].as_str()).unwrap_or("").to_string();
    let first = text(0);
    if first.starts_with("A new node was added") {
        let pick = first.lines().find_map(|l| l.strip_prefix("- id: ").and_then(|r| r.split(" |").next()));
        return match pick {
            Some(id) => json!({"related": [{"id": id, "note": "scripted pick"}]}).to_string(),
            None => json!({"related": []}).to_string(),
        };
    }
    // The leaf prompt (curator-v3; "You write the frontmatter `summary`" before).
    if first.starts_with("Write the `summary` (scent) of one document") {
        summaries.fetch_add(1, Ordering::SeqCst);
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text(1).hash(&mut h);
    // Words only, no invented numbers or names: the Curator's grounding
    // check would reject those (issue 35).
    let words = ["ledger", "roster", "memo", "plan", "survey", "brief", "log", "digest"];
    let kinds = ["weekly", "annual", "draft", "signed", "shared", "scanned", "printed", "archived"];
    let v = h.finish();
    let summary = format!(
        "Scripted {} {} of the depot, kept with the {} records.",
        kinds[((v >> 8) % 8) as usize],
        words[(v % 8) as usize],
        kinds[((v >> 16) % 8) as usize].replace("ed", "ing")
    );
    json!({"summary": summary, "tags": ["scripted"]}).to_string()
}

/// `n` distinct Markdown, text and HTML files in nested folders.
pub(crate) fn corpus(dir: &Path, n: usize) -> Vec<String> {
    let mut rels = vec![];
    for i in 0..n {
        let (rel, text) = match i % 3 {
            0 => (
                format!("team-{}/report-{i:03}.md", i % 5),
                format!("# Report {i}\n\nSite {i} logged {} pallets in aisle {}.\n", i * 7 % 31, i % 9),
            ),
            1 => (
                format!("notes/n{}/note-{i:03}.txt", i % 4),
                format!("note {i}: call the depot about crate {}\n", i * 3),
            ),
            _ => (
                format!("pages/page-{i:03}.html"),
                format!("<html><head><title>Page {i}</title></head><body><p>Opening hours {i}.</p></body></html>"),
            ),
        };
        let p = dir.join(&rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        rels.push(rel);
    }
    rels
}

fn llm_env<'a>(c: &'a mut Command, url: &str) -> &'a mut Command {
    c.env("MONKEYLLM_LLM_ENDPOINT", url)
        .env("MONKEYLLM_LLM_MODEL", "test-model")
        .env("FOREST_LLM_CONCURRENCY", "4")
        .env("FOREST_TODAY", "2026-11-29")
}

fn tree(root: &Path) -> String {
    git(root, &["rev-parse", "HEAD^{tree}"])
}

fn report(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    })
}

/// A forest whose only commit after init records `src` as source `drive`.
fn recorded(dir: &Path, src: &Path) -> PathBuf {
    fs::create_dir_all(dir).unwrap();
    let root = init(dir);
    let o = run(&["adopt", "--forest", &f(&root), src.to_str().unwrap(), "--name", "drive", "--record-only", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(report(&o)["commits"].as_array().unwrap().len(), 1);
    root
}

/// The single-process reference: `forest sync --curate` of `src`.
fn reference_tree(dir: &Path, src: &Path) -> String {
    let root = recorded(dir, src);
    let server = Scripted::start(Duration::ZERO);
    let o = llm_env(&mut bin(), &server.url())
        .args(["sync", "--forest", &f(&root), "--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&o);
    assert!(r["curation"]["links_proposed"].as_u64().unwrap() > 0, "proposals exercised: {}", r["curation"]);
    tree(&root)
}

fn clone_of(root: &Path, to: &Path) -> PathBuf {
    let o = Command::new("git").args(["clone", "-q", root.to_str().unwrap(), to.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    to.to_path_buf()
}

/// Directory store: a truncated and a tampered object are detected by
/// their hash and redone (by the committer, and by a re-run worker), never
/// committed; a worker runs while the clone's writer lock is held.
#[test]
fn tampered_store_objects_are_redone_and_workers_take_no_lock() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let rels = corpus(&src, 12);
    let want = reference_tree(&d.path().join("ref"), &src);
    let root = recorded(&d.path().join("dist"), &src);
    let clone = clone_of(&root, &d.path().join("w0"));
    let store = d.path().join("store");
    let server = Scripted::start(Duration::ZERO);
    let lock = forest_git::WriterLock::acquire(&clone).unwrap();
    let worker = |args: &[&str]| {
        let mut c = bin();
        llm_env(&mut c, &server.url())
            .args(["sync", "--forest", &f(&clone), "--store", store.to_str().unwrap(), "--curate", "--json"])
            .args(args)
            .output()
            .unwrap()
    };
    let o = worker(&["--shard", "0/1"]);
    assert_eq!(code(&o), 0, "a worker takes no writer lock: {}", String::from_utf8_lossy(&o.stderr));
    let w = report(&o);
    assert_eq!(w["sources"][0]["prepared"].as_u64(), Some(rels.len() as u64), "{w:#}");
    assert_eq!(w["sources"][0]["curated"].as_u64(), Some(rels.len() as u64));
    assert_eq!(server.summaries(), rels.len());
    // The worker never wrote the clone's repository.
    assert_eq!(git(&clone, &["rev-list", "--count", "HEAD"]), git(&root, &["rev-list", "--count", "HEAD"]));
    // The lock holder's writes are refused as ever.
    let o = run(&["sync", "--forest", &f(&clone)]);
    assert_eq!(code(&o), 11);
    drop(lock);
    // Truncate one object, flip one byte of another's payload.
    let objects: Vec<PathBuf> = walkdir::WalkDir::new(store.join("objects"))
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect();
    assert_eq!(objects.len(), rels.len());
    let full = fs::read(&objects[0]).unwrap();
    fs::write(&objects[0], &full[..full.len() / 2]).unwrap();
    let mut bytes = fs::read(&objects[1]).unwrap();
    let at = bytes.iter().rposition(|&b| b.is_ascii_lowercase()).unwrap();
    bytes[at] = if bytes[at] == b'z' { b'y' } else { bytes[at] + 1 };
    fs::write(&objects[1], &bytes).unwrap();
    let committer = Scripted::start(Duration::ZERO);
    let o = llm_env(&mut bin(), &committer.url())
        .args(["sync", "--forest", &f(&root), "--store", store.to_str().unwrap(), "--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let s = &report(&o)["sources"][0];
    assert_eq!(s["store_corrupt"].as_u64(), Some(2), "{s:#}");
    assert_eq!(s["store_hits"].as_u64(), Some(rels.len() as u64 - 2));
    assert_eq!(s["local_conversions"].as_u64(), Some(2), "only the bad objects were converted here");
    assert_eq!(committer.summaries(), 2, "only the bad objects were curated here");
    assert_eq!(tree(&root), want, "nothing of the bad objects was committed");
    // A re-run worker redoes the bad objects and keeps the good ones.
    let o = worker(&["--shard", "0/1"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let w = &report(&o)["sources"][0];
    assert_eq!(w["already_prepared"].as_u64(), Some(rels.len() as u64 - 2), "{w:#}");
    assert_eq!(w["prepared"].as_u64(), Some(2));
    assert_eq!(w["redone_corrupt"].as_u64(), Some(2));
}

/// The real 100-document dump (Markdown, text, CSV and JSON datasets): a
/// worker prepares every file, and the committer of the unchanged source
/// takes every one from the store (100 of 100 hits, no conversion and no
/// summary call of its own) and commits the single-process tree.
#[test]
fn every_prepared_object_of_the_dump_is_reused() {
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let n = dump_all(&src) as u64;
    let want = reference_tree(&d.path().join("ref"), &src);
    let root = recorded(&d.path().join("dist"), &src);
    let clone = clone_of(&root, &d.path().join("w0"));
    let store = d.path().join("store");
    let sync = |forest: &Path, server: &Scripted, shard: &[&str]| {
        let o = llm_env(&mut bin(), &server.url())
            .args(["sync", "--forest", &f(forest), "--store", store.to_str().unwrap(), "--curate", "--json"])
            .args(shard)
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        report(&o)["sources"][0].clone()
    };
    let worker = Scripted::start(Duration::ZERO);
    let w = sync(&clone, &worker, &["--shard", "0/1"]);
    assert_eq!(w["prepared"].as_u64(), Some(n), "{w:#}");
    assert_eq!(w["left_to_committer"].as_u64(), Some(0), "{w:#}");
    let committer = Scripted::start(Duration::ZERO);
    let s = sync(&root, &committer, &[]);
    assert_eq!(s["store_hits"].as_u64(), Some(n), "{s:#}");
    assert_eq!(s["local_conversions"].as_u64(), Some(0), "{s:#}");
    assert_eq!(s["store_curations"].as_u64(), Some(w["curated"].as_u64().unwrap()), "{s:#}");
    assert_eq!(committer.summaries(), (n - w["curated"].as_u64().unwrap()) as usize, "only fallbacks are retried");
    assert_eq!(tree(&root), want, "same forest as one process");
}

fn s3env<'a>(c: &'a mut Command, ep: &str) -> &'a mut Command {
    c.env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_ENDPOINT_URL", ep)
        .env_remove("AWS_PROFILE")
}

/// Objects in the store whose provenance names shard `shard`.
fn shard_objects(c: &forest_storage::S3Client, bucket: &str, shard: &str, seen: &mut HashSet<String>) -> usize {
    let loc = forest_storage::S3Location::parse(&format!("s3://{bucket}/prep/")).unwrap();
    for o in c.list(&loc).unwrap() {
        let key = o.key_lossy();
        if seen.contains(&key) {
            continue;
        }
        if let Ok(Some(b)) = c.get_object_bytes(bucket, &key) {
            if String::from_utf8_lossy(&b).contains(&format!("\"shard\":\"{shard}\"")) {
                seen.insert(key);
            }
        }
    }
    seen.len()
}

/// The acceptance run: 4 workers at once against moto and the
/// scripted LLM, one SIGKILLed half-way and its shard re-run, a committer
/// that only takes what is ready while a shard is missing, then the
/// committer: the tree equals a single-process `sync --curate`, and the
/// committer made no conversion and no summary call for prepared files.
#[test]
fn four_workers_and_a_committer_equal_one_process() {
    let Some(ep) = endpoint() else { return };
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    let rels = corpus(&src, 160);
    let want = reference_tree(&d.path().join("ref"), &src);
    let root = recorded(&d.path().join("dist"), &src);
    std::env::set_var("AWS_ACCESS_KEY_ID", "test");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "test");
    std::env::set_var("AWS_REGION", "us-east-1");
    let c = forest_storage::S3Client::new(&forest_storage::S3Options::with_endpoint(&ep)).unwrap();
    let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let bucket = format!("forest-dist-{}", n % 1_000_000_000);
    c.create_bucket(&bucket).unwrap();
    let store = format!("s3://{bucket}/prep");
    // Slow enough answers that a kill lands half-way through shard 0.
    let server = Scripted::start(Duration::from_millis(300));
    let spawn = |i: usize, args: &[&str]| {
        let clone = d.path().join(format!("w{i}"));
        if !clone.exists() {
            clone_of(&root, &clone);
        }
        let mut cmd = bin();
        s3env(llm_env(&mut cmd, &server.url()), &ep)
            .env("FOREST_PREPARE_ROUND", "4")
            .args(["sync", "--forest", clone.to_str().unwrap(), "--store", &store, "--curate", "--json"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut victim = {
        // Shard 0 takes its index from JOB_COMPLETION_INDEX, as in an Indexed Job.
        let clone = clone_of(&root, &d.path().join("w0"));
        let mut cmd = bin();
        s3env(llm_env(&mut cmd, &server.url()), &ep)
            .env("FOREST_PREPARE_ROUND", "4")
            .env("JOB_COMPLETION_INDEX", "0")
            .args(["sync", "--forest", clone.to_str().unwrap(), "--store", &store, "--curate", "--shard", "4"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let others: Vec<_> = (1..4).map(|i| spawn(i, &["--shard", &format!("{i}/4")])).collect();
    let in_shard0 = rels.iter().filter(|r| forest_gardener::prepared::shard_of("drive", r, 4) == 0).count();
    let mut seen = HashSet::new();
    let t = Instant::now();
    while shard_objects(&c, &bucket, "0/4", &mut seen) < in_shard0 / 3 {
        assert!(t.elapsed() < Duration::from_secs(120), "shard 0 made no progress");
        std::thread::sleep(Duration::from_millis(30));
    }
    victim.kill().unwrap(); // SIGKILL
    let _ = victim.wait();
    let before = shard_objects(&c, &bucket, "0/4", &mut seen);
    assert!(before < in_shard0, "killed half-way ({before} of {in_shard0})");
    for w in others {
        let o = w.wait_with_output().unwrap();
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    }
    // A committer started while shard 0 is unfinished commits what is ready.
    {
        let early = clone_of(&root, &d.path().join("early"));
        let s = Scripted::start(Duration::ZERO);
        let mut cmd = bin();
        let o = s3env(llm_env(&mut cmd, &s.url()), &ep)
            .args(["sync", "--forest", &f(&early), "--store", &store, "--prepared-only", "--curate", "--json"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
        let r = &report(&o)["sources"][0];
        let ready = r["store_hits"].as_u64().unwrap() as usize;
        assert_eq!(r["local_conversions"].as_u64(), Some(0), "{r:#}");
        assert_eq!(r["planted"].as_array().unwrap().len(), ready);
        assert_eq!(r["deferred"].as_u64().unwrap() as usize, rels.len() - ready);
        assert!(ready >= rels.len() - in_shard0 + before && ready < rels.len());
        assert_eq!(s.summaries(), 0);
    }
    let o = spawn(0, &["--shard", "0/4"]).wait_with_output().unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let w = &report(&o)["sources"][0];
    assert_eq!(w["in_shard"].as_u64(), Some(in_shard0 as u64));
    assert_eq!(
        w["already_prepared"].as_u64().unwrap() + w["prepared"].as_u64().unwrap() + w["raced"].as_u64().unwrap(),
        in_shard0 as u64,
        "{w:#}"
    );
    assert!(w["already_prepared"].as_u64().unwrap() >= before as u64, "the retry skips what the killed pod stored");
    let committer = Scripted::start(Duration::ZERO);
    let mut cmd = bin();
    let o = s3env(llm_env(&mut cmd, &committer.url()), &ep)
        .args(["sync", "--forest", &f(&root), "--store", &store, "--curate", "--json"])
        .output()
        .unwrap();
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let r = report(&o);
    let s = &r["sources"][0];
    assert_eq!(s["store_hits"].as_u64(), Some(rels.len() as u64), "{s:#}");
    assert_eq!(s["store_curations"].as_u64(), Some(rels.len() as u64));
    assert_eq!(s["local_conversions"].as_u64(), Some(0));
    assert_eq!(committer.summaries(), 0, "no summary call for prepared files");
    assert!(committer.total() > 0, "proposals and rollups are the committer's");
    assert_eq!(tree(&root), want, "same forest as one process");
}
