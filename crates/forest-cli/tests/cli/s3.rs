//! S3 sources against a real S3-compatible server (moto, started by
//! `ops/s3/start.sh`; `.ci/run` exports `FOREST_TEST_S3_ENDPOINT`). Without
//! the variable these tests print a skip line and return.

use super::*;
use forest_storage::{S3Client, S3Options};
use serde_json::Value;

const PNG_HEAD: &[u8] = include_bytes!("../../../../converters/forest-convert/tests/data/team_photo-2026.png");

/// The moto endpoint of the test run, or a skip note.
pub(crate) fn endpoint() -> Option<String> {
    match std::env::var("FOREST_TEST_S3_ENDPOINT") {
        Ok(e) if !e.is_empty() => Some(e),
        _ => {
            forest_testkit::skip("FOREST_TEST_S3_ENDPOINT is not set (the moto S3 server: ops/s3/start.sh)");
            None
        }
    }
}

fn s3env(c: &mut Command) -> &mut Command {
    c.env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", "test")
        .env("AWS_REGION", "us-east-1")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_ENDPOINT_URL")
}

fn client(ep: &str) -> S3Client {
    std::env::set_var("AWS_ACCESS_KEY_ID", "test");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "test");
    std::env::set_var("AWS_REGION", "us-east-1");
    S3Client::new(&S3Options::with_endpoint(ep)).unwrap()
}

fn fs3(args: &[&str]) -> Output {
    s3env(&mut bin()).args(args).output().unwrap()
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
    })
}

fn bucket_name(tag: &str) -> String {
    let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("forest-{tag}-{}", n % 1_000_000_000)
}

fn src(report: &Value) -> &Value {
    &report["sources"][0]
}

fn count(report: &Value, key: &str) -> usize {
    src(report)[key].as_array().map(|a| a.len()).unwrap_or(0)
}

fn text_doc(i: usize) -> String {
    format!(
        "# Field report {i}\n\nSite {i} inspection found {} pallets of widget model W{} in aisle {}. \
         The team logged humidity readings and scheduled a follow-up visit.\n",
        i * 3 % 17,
        i % 40,
        i % 9
    )
}

#[test]
fn s3_adopt_paginates_and_sync_classifies() {
    let Some(ep) = endpoint() else { return };
    let c = client(&ep);
    let b = bucket_name("sync");
    c.create_bucket(&b).unwrap();
    // 1,050 objects (> one 1,000-key page) of mixed types plus hostile keys.
    let mut good = 0;
    for i in 0..1000 {
        // 20 folders of 50: below the branch-split threshold, so ids stay flat.
        let key = format!("corpus/team-{}/report-{i:04}.md", i % 20);
        c.put_object(&b, &key, text_doc(i).as_bytes()).unwrap();
        good += 1;
    }
    for i in 0..20 {
        c.put_object(
            &b,
            &format!("corpus/notes/note-{i}.txt"),
            format!("plain note number {i} about logistics\n").as_bytes(),
        )
        .unwrap();
        c.put_object(&b, &format!("corpus/tables/t{i}.csv"), format!("sku,qty\nA{i},{i}\nB{i},{}\n", i + 1).as_bytes())
            .unwrap();
        good += 2;
    }
    c.put_object(&b, "corpus/data/config.json", br#"{"name": "crane", "limits": {"load": 12}}"#).unwrap();
    c.put_object(
        &b,
        "corpus/pages/intro.html",
        b"<html><head><title>Intro</title></head><body><p>Welcome aboard.</p></body></html>",
    )
    .unwrap();
    let mut png = PNG_HEAD.to_vec();
    png.extend(std::iter::repeat_n(7u8, 4096));
    c.put_object(&b, "corpus/img/site photo.png", &png).unwrap();
    good += 3;
    // Two names that collide after slugify, and keys that must never become paths.
    c.put_object(&b, "corpus/dup/Plan.md", b"# Plan A\n\nFirst plan.\n").unwrap();
    c.put_object(&b, "corpus/dup/plan.md", b"# Plan B\n\nSecond plan.\n").unwrap();
    good += 2;
    c.put_object(&b, "corpus/../escape.md", b"# Escape\n\nnope\n").unwrap();
    c.put_object(&b, "corpus//double.md", b"# Double\n\nnope\n").unwrap();
    c.put_object(&b, "corpus/dir/", b"").unwrap();
    // A nested forest under a capitalised name: its `_index.md` sorts after
    // `Nested/A.md`, so the streamed listing must hold `A.md` back until it
    // knows; nothing of it is planted.
    c.put_object(&b, "corpus/Nested/A.md", b"# A\n\nInside a forest.\n").unwrap();
    c.put_object(&b, "corpus/Nested/_index.md", b"---\ntype: branch\n---\n# Nested\n").unwrap();
    c.put_object(&b, "corpus/Nested/lower.md", b"# lower\n\nInside a forest.\n").unwrap();

    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let uri = format!("s3://{b}/corpus/");
    let o = fs3(&["adopt", "--forest", &f(&root), &uri, "--endpoint-url", &ep, "--commit-every", "400", "--json"]);
    let r = json_of(&o);
    // Refused keys are skipped with a reason (one line each), never partial.
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(count(&r, "planted"), good, "{:#}", src(&r)["errors"]);
    assert_eq!(count(&r, "errors"), 0, "{:#}", src(&r)["errors"]);
    let errors: Vec<String> =
        src(&r)["skipped"].as_array().unwrap().iter().map(|e| format!("{} {}", e["path"], e["message"])).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("../escape.md") && e.contains("never a path escape")), "{errors:?}");
    assert!(errors.iter().any(|e| e.contains("/double.md")), "{errors:?}");
    let warnings = src(&r)["warnings"].to_string();
    assert!(warnings.contains("collide after slugify"), "{warnings}");
    assert!(!root.join("escape.md").exists() && !d.path().join("escape.md").exists());
    assert!(!root.join("nested").exists() && !root.join("Nested").exists(), "a nested forest is never a source");
    // Checkpoints: 1,045 files at --commit-every 400 -> 3 commits.
    assert_eq!(r["commits"].as_array().unwrap().len(), 3);
    fsck(&root);
    let v = run(&["validate", "--forest", &f(&root)]);
    assert_eq!(code(&v), 0, "{}", String::from_utf8_lossy(&v.stdout));
    // Passports record the object: origin, ETag; the image's BONE stays in S3.
    let p = fs::read_to_string(root.join("team-3/report-0003.md")).unwrap();
    assert!(p.contains(&format!("origin: s3://{b}/corpus/team-3/report-0003.md")), "{p}");
    assert!(p.contains("source_etag:"), "{p}");
    let img = fs::read_to_string(root.join("img/site-photo.md")).unwrap();
    assert!(img.contains(&format!("payload: s3://{b}/corpus/img/site%20photo.png")), "{img}");
    assert!(img.contains("payload_type: image"), "{img}");

    // No change: nothing downloaded, nothing committed.
    let head = git(&root, &["rev-parse", "HEAD"]);
    let o = fs3(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&o);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    // The hostile keys are known problems now: counted, not listed again.
    assert_eq!(src(&r)["known_problems"].as_u64(), Some(2), "{r:#}");
    assert_eq!(count(&r, "skipped"), 0);
    assert_eq!(src(&r)["unchanged"].as_u64(), Some(good as u64));
    assert_eq!(src(&r)["bytes_read"].as_u64(), Some(0), "a no-change sync downloads nothing");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);

    // put (new) / overwrite (changed) / delete (stale) / copy+delete (move).
    c.put_object(&b, "corpus/notes/new-note.txt", b"a brand new note about cranes\n").unwrap();
    c.put_object(&b, "corpus/team-1/report-0001.md", b"# Field report 1\n\nRewritten after the audit.\n").unwrap();
    c.delete_object(&b, "corpus/team-2/report-0002.md").unwrap();
    c.copy_object(&b, "corpus/team-4/report-0004.md", "corpus/archive/report-0004.md").unwrap();
    c.delete_object(&b, "corpus/team-4/report-0004.md").unwrap();
    let o = fs3(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&o);
    assert_eq!(count(&r, "planted"), 1, "{:#}", src(&r));
    assert_eq!(src(&r)["planted"][0], "notes/new-note");
    assert_eq!(count(&r, "updated"), 1);
    assert_eq!(src(&r)["updated"][0], "team-1/report-0001");
    assert_eq!(count(&r, "stale"), 1);
    assert_eq!(src(&r)["stale"][0], "team-2/report-0002");
    assert_eq!(count(&r, "moved"), 1);
    assert_eq!(src(&r)["moved"][0]["from"], "team-4/report-0004");
    assert_eq!(src(&r)["moved"][0]["to"], "archive/report-0004");
    let moved = fs::read_to_string(root.join("archive/report-0004.md")).unwrap();
    assert!(moved.contains(&format!("origin: s3://{b}/corpus/archive/report-0004.md")), "{moved}");
    assert!(moved.contains("- team-4/report-0004"), "old id kept as alias: {moved}");
    fsck(&root);
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
}

#[test]
fn s3_listing_error_marks_nothing_stale_and_the_map_works_offline() {
    let Some(ep) = endpoint() else { return };
    let c = client(&ep);
    let b = bucket_name("offline");
    c.create_bucket(&b).unwrap();
    for i in 0..30 {
        c.put_object(&b, &format!("docs/r{i}.md"), text_doc(i).as_bytes()).unwrap();
    }
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let o = fs3(&["adopt", "--forest", &f(&root), &format!("s3://{b}/docs"), "--endpoint-url", &ep]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let head = git(&root, &["rev-parse", "HEAD"]);
    // The store becomes unreachable: point the recorded endpoint at a closed port.
    let cfg_path = root.join("_meta/gardener.yaml");
    let cfg = fs::read_to_string(&cfg_path).unwrap();
    let dead = "http://127.0.0.1:9";
    fs::write(&cfg_path, cfg.replace(&ep, dead)).unwrap();
    let o = fs3(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&o);
    // its only source unreachable: nothing synced, an error (not partial)
    assert_eq!(code(&o), 1, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(src(&r)["unreachable"], true, "{r:#}");
    assert_eq!(count(&r, "stale"), 0);
    assert!(src(&r)["errors"][0]["message"].as_str().unwrap().contains("nothing marked stale"), "{r:#}");
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head, "nothing committed");
    // A missing bucket is a listing error too (the object store answers 404).
    fs::write(&cfg_path, cfg.replace(&format!("s3://{b}/"), "s3://forest-no-such-bucket/")).unwrap();
    let o = fs3(&["sync", "--forest", &f(&root), "--json"]);
    assert_eq!(count(&json_of(&o), "stale"), 0);
    assert_eq!(git(&root, &["rev-parse", "HEAD"]), head);
    // Scent is local: validate and locate work without the bucket.
    fs::write(&cfg_path, cfg.replace(&ep, dead)).unwrap();
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);
    let o = run(&["locate", "--forest", &f(&root), "field report inspection", "--json"]);
    assert_eq!(code(&o), 0);
    assert!(json_of(&o)["results"].as_array().is_some_and(|a| !a.is_empty()), "{}", String::from_utf8_lossy(&o.stdout));
}

fn dir_bytes(p: &Path) -> u64 {
    walkdir::WalkDir::new(p)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
        .sum()
}

#[test]
fn s3_scent_only_forest_and_hash_validated_fetch() {
    let Some(ep) = endpoint() else { return };
    let c = client(&ep);
    let b = bucket_name("scent");
    c.create_bucket(&b).unwrap();
    let mut source_bytes = 0u64;
    // 40 large binaries (BONE) and 30 text notes (FLESH by reference).
    for i in 0..40u32 {
        let mut png = PNG_HEAD.to_vec();
        let mut x = i.wrapping_mul(2654435761);
        png.extend((0..2_500_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        }));
        source_bytes += png.len() as u64;
        c.put_object(&b, &format!("drive/photos/site-{i:02}.png"), &png).unwrap();
    }
    for i in 0..30 {
        let t = text_doc(i);
        source_bytes += t.len() as u64;
        c.put_object(&b, &format!("drive/notes/n{i:02}.md"), t.as_bytes()).unwrap();
    }
    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let uri = format!("s3://{b}/drive/");
    let o = fs3(&["adopt", "--forest", &f(&root), &uri, "--endpoint-url", &ep, "--content", "reference"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let forest_bytes = dir_bytes(&root);
    let ratio = forest_bytes as f64 / source_bytes as f64;
    eprintln!(
        "scent-only: forest {forest_bytes} B (excluding .git) for {source_bytes} B of source = {:.4}%",
        ratio * 100.0
    );
    assert!(ratio < 0.005, "forest is {:.3}% of the source", ratio * 100.0);
    let note = fs::read_to_string(root.join("notes/n03.md")).unwrap();
    assert!(note.contains("content: reference") && note.trim_end().ends_with("---\n\n# Field report 3"), "{note}");
    assert_eq!(code(&run(&["validate", "--forest", &f(&root)])), 0);

    // FLESH by reference is read live from the bucket.
    let o = fs3(&["fetch", "--forest", &f(&root), "--body", "notes/n03"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("humidity readings"));

    // BONE through the cache: verified bytes, then a hit.
    let o = fs3(&["fetch", "--forest", &f(&root), "photos/site-07", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    let item = &json_of(&o)["items"][0];
    let cached = PathBuf::from(item["path"].as_str().unwrap());
    assert!(cached.starts_with(root.join("_derived/payloads")));
    assert_eq!(fs::metadata(&cached).unwrap().len(), PNG_HEAD.len() as u64 + 2_500_000);
    let o = fs3(&["prefetch", "--forest", &f(&root), "photos", "--json"]);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o)["fetched"].as_array().unwrap().len(), 40);

    // Tampered at the source: the hash check refuses it, nothing is served or kept.
    fs::remove_dir_all(root.join("_derived/payloads")).unwrap();
    c.put_object(&b, "drive/photos/site-07.png", b"\x89PNG tampered").unwrap();
    let o = fs3(&["fetch", "--forest", &f(&root), "photos/site-07", "--json"]);
    assert_eq!(code(&o), 1);
    let item = &json_of(&o)["items"][0];
    assert!(item["path"].is_null());
    assert!(item["error"].as_str().unwrap().contains("hash mismatch"), "{item}");
    let left: Vec<_> = fs::read_dir(root.join("_derived/payloads"))
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "nothing left in the cache: {left:?}");
}

/// An object-store drive of 160 top folders is bucketed at adopt like a
/// local one (the plan comes from one delimiter listing of the prefix):
/// the master lists a few buckets, nothing moves, and a new folder added
/// later lands in its bucket while existing folders keep their place.
#[test]
fn s3_wide_drive_is_bucketed_at_adopt_and_new_folders_move_nobody() {
    let Some(ep) = endpoint() else { return };
    let c = client(&ep);
    let b = bucket_name("wide");
    c.create_bucket(&b).unwrap();
    let depts = ["eng", "fin", "hr", "legal", "ops", "sales"];
    for i in 0..160 {
        let key = format!("drive/{}-{i:03}/report-0.md", depts[i % depts.len()]);
        c.put_object(&b, &key, text_doc(i).as_bytes()).unwrap();
    }
    c.put_object(&b, "drive/readme.md", text_doc(999).as_bytes()).unwrap();
    // The delimiter listing sees exactly the sub-folders and the loose file.
    let loc = forest_storage::S3Location::parse(&format!("s3://{b}/drive/")).unwrap();
    let top = c.list_folder(&loc, "").unwrap();
    assert_eq!((top.folders.len(), top.files), (160, 1), "{top:?}");
    assert_eq!(c.list_folder(&loc, "eng-000").unwrap().files, 1);

    let d = tempfile::tempdir().unwrap();
    let root = init(d.path());
    let uri = format!("s3://{b}/drive/");
    let o = fs3(&["adopt", "--forest", &f(&root), &uri, "--endpoint-url", &ep, "--json"]);
    let r = json_of(&o);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(count(&r, "planted"), 161, "{:#}", src(&r)["errors"]);
    assert_eq!(count(&r, "moved"), 0);
    let master = fs::read_to_string(root.join("_index.md")).unwrap();
    let entries = master.lines().filter(|l| l.starts_with("- [[")).count();
    assert!(entries <= 20, "the master lists a few buckets, not 160 folders: {master}");
    // One level of name ranges: `~e..fin-01/eng-000/`.
    let eng = forest_model::walk::node_paths(&root)
        .into_iter()
        .find(|p| p.ends_with("/eng-000/report-0.md"))
        .unwrap_or_else(|| panic!("{master}"));
    assert!(eng.starts_with('~') && eng.split('/').count() == 3, "{eng}");
    let bucket = eng.split('/').next().unwrap().to_string();
    super::split::assert_navigable(&root, "", 161);

    let before: Vec<String> = forest_model::walk::node_paths(&root);
    c.put_object(&b, "drive/eng-999/report-0.md", text_doc(7).as_bytes()).unwrap();
    c.put_object(&b, "drive/eng-000/report-9.md", text_doc(8).as_bytes()).unwrap();
    let o = fs3(&["sync", "--forest", &f(&root), "--json"]);
    let r = json_of(&o);
    assert_eq!(code(&o), 0, "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!((count(&r, "planted"), count(&r, "moved")), (2, 0), "{r:#}");
    let paths = forest_model::walk::node_paths(&root);
    let new = paths.iter().find(|p| p.ends_with("/eng-999/report-0.md")).expect("eng-999 planted");
    assert!(new.starts_with('~') && new.split('/').count() == 3, "in the range that covers it: {new}");
    assert!(root.join(format!("{bucket}/eng-000/report-9.md")).exists());
    let after: Vec<String> = forest_model::walk::node_paths(&root);
    assert!(before.iter().all(|p| after.contains(p)), "no existing node moved");
    fsck(&root);
}
