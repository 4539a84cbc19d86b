//! Integration tests of forest-storage.
//!
//! Against a real S3 server when `FOREST_TEST_S3_ENDPOINT` is set (start one
//! with `ops/s3/start.sh`); those tests print a skip line otherwise. The
//! resume and kill tests use a tiny in-process HTTP server that speaks just
//! enough S3 GetObject, so they always run.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use forest_storage::{PayloadCache, S3Client, S3Credentials, S3Location, S3Options, StorageError};
use sha2::{Digest, Sha256};

// ---------------------------------------------------------------- helpers

fn options_for(endpoint: &str) -> S3Options {
    S3Options {
        endpoint_url: Some(endpoint.to_string()),
        path_style: true,
        region: Some("us-east-1".into()),
        // moto and the fake server accept anything; explicit keys keep the
        // tests independent of the caller's environment.
        credentials: Some(S3Credentials { access_key_id: "test".into(), secret_access_key: "test".into() }),
    }
}

/// The real server, or `None` after printing a skip line.
fn s3(test: &str) -> Option<Arc<S3Client>> {
    match std::env::var("FOREST_TEST_S3_ENDPOINT") {
        Ok(ep) if !ep.trim().is_empty() => Some(Arc::new(S3Client::new(&options_for(ep.trim())).unwrap())),
        _ => {
            let _ = test;
            forest_testkit::skip("FOREST_TEST_S3_ENDPOINT is not set (the moto S3 server: ops/s3/start.sh)");
            None
        }
    }
}

fn bucket(client: &S3Client, tag: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().subsec_nanos();
    let name = format!("ft-{tag}-{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
    client.create_bucket(&name).unwrap();
    name
}

fn sha256_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// Deterministic, incompressible-enough test bytes.
fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => vec![],
    };
    v.sort();
    v
}

// ---------------------------------------------------------------- real S3

#[test]
fn list_paginates_over_1000_objects() {
    let Some(c) = s3("list_paginates_over_1000_objects") else { return };
    let b = bucket(&c, "list");
    let n = 1050usize;
    let expected: Mutex<BTreeMap<String, (u64, String)>> = Mutex::new(BTreeMap::new());
    thread::scope(|s| {
        for t in 0..4 {
            let (c, b, expected) = (&c, &b, &expected);
            s.spawn(move || {
                for i in (t..n).step_by(4) {
                    let key = format!("pfx/{:02}/obj-{i:05}.bin", i % 13);
                    let body = content(i % 37, i as u64);
                    let etag = c.put_object(b, &key, &body).unwrap();
                    expected.lock().unwrap().insert(key, (body.len() as u64, etag));
                }
            });
        }
    });
    c.put_object(&b, "pfx/dir/", b"").unwrap(); // directory marker: skipped
    c.put_object(&b, "pfx-other/x", b"x").unwrap(); // outside the prefix
    c.put_object(&b, "outside", b"y").unwrap();
    let loc = S3Location::parse(&format!("s3://{b}/pfx")).unwrap();
    let listed = c.list(&loc).unwrap();
    let expected = expected.into_inner().unwrap();
    assert_eq!(listed.len(), n);
    let got: BTreeMap<String, (u64, String)> =
        listed.iter().map(|m| (m.key.clone().unwrap(), (m.size, m.etag.clone()))).collect();
    assert_eq!(got, expected);
    assert!(listed.iter().all(|m| m.last_modified_ms > 1_600_000_000_000 && !m.etag.contains('"')));
    assert_eq!(listed[0].relative_to("pfx/").map(|r| r.starts_with("00/")), Some(true));
    // The Gardener merge-joins the pages as they come: keys in byte order.
    assert!(listed.windows(2).all(|w| w[0].raw_key < w[1].raw_key), "ListObjectsV2 answers in key order");
    let mut paged = 0usize;
    c.list_each(&loc, &mut |_| paged += 1).unwrap();
    assert_eq!(paged, n);
    assert!(c.exists(&b, "pfx/00/obj-00000.bin").unwrap());
    assert!(!c.exists(&b, "pfx/00/_index.md").unwrap(), "a missing key is `false`, not an error");
    let all = c.list(&S3Location::parse(&format!("s3://{b}")).unwrap()).unwrap();
    assert_eq!(all.len(), n + 2);
    // A missing bucket is an error, never an empty listing.
    let e = c.list(&S3Location::parse("s3://ft-no-such-bucket-xyz/").unwrap()).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert!(e.to_string().contains("ft-no-such-bucket-xyz"), "{e}");
}

#[test]
fn keys_needing_url_encoding_round_trip() {
    let Some(c) = s3("keys_needing_url_encoding_round_trip") else { return };
    let b = bucket(&c, "enc");
    let keys = ["dir/a b+c%d&e=f?g#h.txt", "dir/ünï cødé/ß.md", "dir/tab\there", "dir/ctl\u{1}x", "dir/100%25"];
    for (i, k) in keys.iter().enumerate() {
        c.put_object(&b, k, format!("body {i}").as_bytes()).unwrap();
    }
    let listed = c.list(&S3Location::parse(&format!("s3://{b}/dir/")).unwrap()).unwrap();
    let mut got: Vec<String> = listed.iter().map(|m| m.key.clone().unwrap()).collect();
    got.sort();
    let mut want: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    want.sort();
    assert_eq!(got, want);
    for m in &listed {
        assert_eq!(m.raw_key, m.key.as_ref().unwrap().as_bytes());
    }
    let tmp = tempfile::tempdir().unwrap();
    for (i, k) in keys.iter().enumerate() {
        let h = c.head(&b, k).unwrap();
        assert_eq!(h.size, format!("body {i}").len() as u64);
        let d = c.download_to(&b, k, &tmp.path().join(format!("f{i}"))).unwrap();
        assert_eq!(d.sha256_hex, sha256_hex(format!("body {i}").as_bytes()));
    }
    c.copy_object(&b, keys[0], "copy/é + ü%.txt").unwrap();
    let d = c.download_to(&b, "copy/é + ü%.txt", &tmp.path().join("copy")).unwrap();
    assert_eq!(fs::read(tmp.path().join("copy")).unwrap(), b"body 0");
    assert_eq!(d.size, 6);
    c.delete_object(&b, "copy/é + ü%.txt").unwrap();
    assert!(c.head(&b, "copy/é + ü%.txt").unwrap_err().is_not_found());
}

#[test]
fn streaming_download_hashes_match() {
    let Some(c) = s3("streaming_download_hashes_match") else { return };
    let b = bucket(&c, "dl");
    let tmp = tempfile::tempdir().unwrap();
    let data = content(5 * 1024 * 1024 + 123, 7);
    let src = tmp.path().join("src.bin");
    fs::write(&src, &data).unwrap();
    let etag = c.put_object_file(&b, "big/blob.bin", &src).unwrap();
    let head = c.head(&b, "big/blob.bin").unwrap();
    assert_eq!((head.size, head.etag.as_str()), (data.len() as u64, etag.as_str()));
    let dest = tmp.path().join("out/blob.bin");
    fs::create_dir_all(dest.parent().unwrap()).unwrap();
    let d = c.download_to(&b, "big/blob.bin", &dest).unwrap();
    assert_eq!(d.size, data.len() as u64);
    assert_eq!(d.sha256_hex, sha256_hex(&data));
    assert_eq!(d.blake3_hex, blake3::hash(&data).to_hex().to_string());
    assert_eq!(d.resumes, 0);
    assert_eq!(fs::read(&dest).unwrap(), data);
    assert_eq!(names(dest.parent().unwrap()), vec!["blob.bin"]);
    // Missing key: NotFound, naming the object, and no file left behind.
    let e = c.download_to(&b, "big/missing.bin", &tmp.path().join("out/missing.bin")).unwrap_err();
    assert!(e.is_not_found(), "{e}");
    assert_eq!(e.to_string(), format!("S3 object not found: s3://{b}/big/missing.bin"));
    assert_eq!(names(dest.parent().unwrap()), vec!["blob.bin"]);
}

#[test]
fn payload_cache_s3_and_file_hits_misses_and_tampering() {
    let Some(c) = s3("payload_cache_s3_and_file_hits_misses_and_tampering") else { return };
    let b = bucket(&c, "cache");
    let tmp = tempfile::tempdir().unwrap();
    let cache_dir = tmp.path().join("_derived/payloads");
    let cache = PayloadCache::open(&cache_dir, Some(Arc::clone(&c))).unwrap();
    let data = content(300_000, 3);
    let good = sha256_hex(&data);
    c.put_object(&b, "datasets/sales.db", &data).unwrap();
    let uri = format!("s3://{b}/datasets/sales.db");

    let p = cache.get(&uri, Some(&good)).unwrap();
    assert_eq!(fs::read(&p).unwrap(), data);
    assert!(p.file_name().unwrap().to_str().unwrap().ends_with("-sales.db"));
    assert_eq!((cache.downloads(), cache.bytes_downloaded()), (1, data.len() as u64));
    assert_eq!(cache.get(&uri, Some(&good)).unwrap(), p);
    assert_eq!(cache.get(&uri, None).unwrap(), p);
    assert_eq!(cache.downloads(), 1);

    // file:// in the same cache.
    let local = tmp.path().join("local src.csv");
    fs::write(&local, b"a,b\n1,2\n").unwrap();
    let furi = format!("file://{}", local.to_str().unwrap().replace(' ', "%20"));
    let fp = cache.get(&furi, Some(&sha256_hex(b"a,b\n1,2\n"))).unwrap();
    assert_eq!(fs::read(&fp).unwrap(), b"a,b\n1,2\n");
    assert_eq!(cache.downloads(), 2);
    cache.get(&furi, None).unwrap();
    assert_eq!(cache.downloads(), 2);

    // The object is overwritten in S3 after its sha256 was recorded.
    c.put_object(&b, "datasets/sales.db", b"evil bytes").unwrap();
    // The verified cached copy still serves...
    assert_eq!(cache.get(&uri, Some(&good)).unwrap(), p);
    // ...but a cold cache refuses the tampered object and keeps nothing.
    let cold_dir = tmp.path().join("cold/payloads");
    let cold = PayloadCache::open(&cold_dir, Some(Arc::clone(&c))).unwrap();
    let e = cold.get(&uri, Some(&good)).unwrap_err();
    assert!(matches!(e, StorageError::HashMismatch { .. }), "{e}");
    assert_eq!(e.to_string(), format!("remote payload hash mismatch: {uri}"));
    assert!(names(&cold_dir).is_empty(), "{:?}", names(&cold_dir));
    // Same with the named-.part fallback.
    let cold = cold.with_tmpfile(false);
    assert!(matches!(cold.get(&uri, Some(&good)), Err(StorageError::HashMismatch { .. })));
    assert!(names(&cold_dir).is_empty(), "{:?}", names(&cold_dir));

    // Missing object and unsupported scheme.
    let missing = format!("s3://{b}/datasets/none.db");
    let e = cache.get(&missing, None).unwrap_err();
    assert_eq!(e.to_string(), format!("remote payload not found: {missing}"));
    let e = cache.get("gs://x/y", None).unwrap_err();
    assert_eq!(e.to_string(), "unsupported payload scheme: gs://");
    assert_eq!(names(&cache_dir).len(), 2);
}

#[test]
fn payload_cache_eviction_keeps_budget() {
    let Some(c) = s3("payload_cache_eviction_keeps_budget") else { return };
    let b = bucket(&c, "evict");
    let tmp = tempfile::tempdir().unwrap();
    let cache = PayloadCache::open(&tmp.path().join("payloads"), Some(Arc::clone(&c))).unwrap();
    let mut uris = vec![];
    for i in 0..5u64 {
        let key = format!("p/{i}.bin");
        c.put_object(&b, &key, &content(1000, i)).unwrap();
        let uri = format!("s3://{b}/{key}");
        let p = cache.get(&uri, None).unwrap();
        // Distinct LRU clocks without sleeping.
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + i * 10);
        fs::File::options().write(true).open(&p).unwrap().set_modified(t).unwrap();
        uris.push(uri);
    }
    // A hit on the oldest makes it the most recently used.
    cache.get(&uris[0], None).unwrap();
    let r = cache.evict(2500e-9).unwrap();
    assert_eq!((r.evicted, r.kept_bytes), (3, 2000));
    let left = names(cache.dir());
    let mut want = vec![forest_storage::slot_name(&uris[0]), forest_storage::slot_name(&uris[4])];
    want.sort();
    assert_eq!(left, want);
    // Evicted payloads come back on demand.
    cache.get(&uris[1], None).unwrap();
    assert_eq!(cache.downloads(), 6);
}

#[test]
fn concurrent_fetches_download_once() {
    let Some(c) = s3("concurrent_fetches_download_once") else { return };
    let b = bucket(&c, "conc");
    let data = content(3 * 1024 * 1024, 11);
    let good = sha256_hex(&data);
    c.put_object(&b, "shared.bin", &data).unwrap();
    let uri = format!("s3://{b}/shared.bin");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("payloads");
    // 8 threads on one cache object...
    let cache = PayloadCache::open(&dir, Some(Arc::clone(&c))).unwrap();
    let barrier = Barrier::new(8);
    let paths: Vec<PathBuf> = thread::scope(|s| {
        let hs: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    barrier.wait();
                    cache.get(&uri, Some(&good)).unwrap()
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(paths.iter().all(|p| p == &paths[0]));
    assert_eq!(cache.downloads(), 1);
    assert_eq!(fs::read(&paths[0]).unwrap(), data);

    // ...and 2 cache objects on one dir (separate lock fds, as two processes).
    let uri2 = format!("s3://{b}/shared.bin?second");
    c.put_object(&b, "shared.bin?second", &data).unwrap();
    let caches = [
        PayloadCache::open(&dir, Some(Arc::clone(&c))).unwrap(),
        PayloadCache::open(&dir, Some(Arc::clone(&c))).unwrap().with_tmpfile(false),
    ];
    let barrier = Barrier::new(8);
    thread::scope(|s| {
        for i in 0..8 {
            let (caches, barrier, uri2, good) = (&caches, &barrier, &uri2, &good);
            s.spawn(move || {
                barrier.wait();
                caches[i % 2].get(uri2, Some(good)).unwrap();
            });
        }
    });
    assert_eq!(caches[0].downloads() + caches[1].downloads(), 1);
    assert_eq!(names(&dir).len(), 2);
}

// ------------------------------------------------- fake S3 GET over TCP

#[derive(Clone, Copy, PartialEq)]
enum FirstGet {
    /// Announce the whole length, send half, close: the client must resume.
    Break,
    /// Announce the whole length, send 64 KiB, then trickle until the client
    /// is gone (bounded to 60 s).
    Hang,
}

/// A one-object HTTP server answering GetObject for any path, Range-aware.
struct FakeS3 {
    addr: String,
    stop: Arc<AtomicBool>,
    requests: Arc<Mutex<Vec<String>>>,
    first_bytes_sent: mpsc::Receiver<()>,
}

impl FakeS3 {
    fn start(body: Arc<Vec<u8>>, first: FirstGet) -> FakeS3 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = format!("http://{}", listener.local_addr().unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(vec![]));
        let (tx, rx) = mpsc::channel();
        let (stop2, reqs2) = (Arc::clone(&stop), Arc::clone(&requests));
        thread::spawn(move || {
            let count = AtomicUsize::new(0);
            while !stop2.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((sock, _)) => {
                        let n = count.fetch_add(1, Ordering::Relaxed);
                        let (body, reqs, tx, stop) =
                            (Arc::clone(&body), Arc::clone(&reqs2), tx.clone(), Arc::clone(&stop2));
                        thread::spawn(move || serve(sock, n, &body, first, &reqs, &tx, &stop));
                    }
                    Err(_) => thread::sleep(Duration::from_millis(10)),
                }
            }
        });
        FakeS3 { addr, stop, requests, first_bytes_sent: rx }
    }
}

impl Drop for FakeS3 {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn serve(
    mut sock: TcpStream,
    n: usize,
    body: &[u8],
    first: FirstGet,
    reqs: &Mutex<Vec<String>>,
    tx: &mpsc::Sender<()>,
    stop: &AtomicBool,
) {
    sock.set_nonblocking(false).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = vec![];
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match sock.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return,
        }
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    reqs.lock().unwrap().push(head.clone());
    let common = "content-type: application/octet-stream\r\netag: \"fake-etag\"\r\n\
                  last-modified: Wed, 01 Jan 2025 00:00:00 GMT\r\nconnection: close\r\n";
    let len = body.len();
    let range_start = head
        .lines()
        .find_map(|l| l.strip_prefix("range: bytes="))
        .and_then(|r| r.trim().trim_end_matches('-').parse::<usize>().ok());
    if n == 0 {
        let _ = write!(sock, "HTTP/1.1 200 OK\r\ncontent-length: {len}\r\n{common}\r\n");
        match first {
            FirstGet::Break => {
                let _ = sock.write_all(&body[..len / 2]);
                let _ = tx.send(());
            }
            FirstGet::Hang => {
                let mut sent = 64 * 1024;
                if sock.write_all(&body[..sent]).is_err() {
                    return;
                }
                let _ = tx.send(());
                let deadline = Instant::now() + Duration::from_secs(60);
                while Instant::now() < deadline && !stop.load(Ordering::Relaxed) && sent + 1024 < len {
                    thread::sleep(Duration::from_millis(100));
                    if sock.write_all(&body[sent..sent + 1024]).is_err() {
                        return;
                    }
                    sent += 1024;
                }
            }
        }
        return; // dropping the socket closes the connection mid-body
    }
    let _ = match range_start {
        Some(s) if s < len => write!(
            sock,
            "HTTP/1.1 206 Partial Content\r\ncontent-length: {}\r\ncontent-range: bytes {s}-{}/{len}\r\n{common}\r\n",
            len - s,
            len - 1
        )
        .and_then(|_| sock.write_all(&body[s..])),
        _ => {
            write!(sock, "HTTP/1.1 200 OK\r\ncontent-length: {len}\r\n{common}\r\n").and_then(|_| sock.write_all(body))
        }
    };
}

#[test]
fn broken_body_is_resumed_with_range() {
    let data = Arc::new(content(1_000_000, 5));
    let server = FakeS3::start(Arc::clone(&data), FirstGet::Break);
    let client = S3Client::new(&options_for(&server.addr)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join("obj.bin");
    let d = client.download_to("bkt", "some/obj.bin", &dest).unwrap();
    assert_eq!(d.sha256_hex, sha256_hex(&data));
    assert_eq!(d.blake3_hex, blake3::hash(&data).to_hex().to_string());
    assert_eq!((d.size, d.resumes), (data.len() as u64, 1));
    assert_eq!(fs::read(&dest).unwrap(), *data);
    let reqs = server.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert!(reqs[0].starts_with("get /bkt/some/obj.bin"), "{}", reqs[0]);
    assert!(reqs[1].contains(&format!("range: bytes={}-", data.len() / 2)), "{}", reqs[1]);
    assert!(reqs[1].contains("if-match: \"fake-etag\""), "{}", reqs[1]);
    // No credentials ever appear in errors.
    let e = S3Client::new(&options_for("http://127.0.0.1:1")).unwrap().head("b", "k").unwrap_err();
    assert!(!e.to_string().contains("test/"), "{e}");
}

const CHILD_ENV: &str = "FOREST_STORAGE_TEST_CHILD";

/// Child mode of `killed_download_leaves_no_partial_file`: fetch and hang
/// until killed. A plain no-op test in normal runs.
#[test]
fn child_fetch() {
    let Ok(spec) = std::env::var(CHILD_ENV) else { return };
    let mut parts = spec.splitn(4, '\n');
    let (endpoint, cache_dir, tmpfile, sha) =
        (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let client = Arc::new(S3Client::new(&options_for(endpoint)).unwrap());
    let cache = PayloadCache::open(Path::new(cache_dir), Some(client)).unwrap().with_tmpfile(tmpfile == "1");
    let r = cache.get("s3://bkt/big/payload.db", Some(sha));
    // Only reached if the parent failed to kill us.
    eprintln!("child finished unexpectedly: {r:?}");
    std::process::exit(3);
}

/// True once `pid` holds an open fd under `dir` with bytes in it.
fn child_is_writing(pid: u32, dir: &Path) -> bool {
    let Ok(fds) = fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    fds.flatten().any(|fd| {
        fs::read_link(fd.path()).is_ok_and(|t| t.starts_with(dir))
            && fs::metadata(fd.path()).is_ok_and(|m| m.is_file() && m.len() > 0)
    })
}

fn kill_mid_download(tmpfile: bool) {
    let data = Arc::new(content(8 * 1024 * 1024, 9));
    let good = sha256_hex(&data);
    let server = FakeS3::start(Arc::clone(&data), FirstGet::Hang);
    let tmp = tempfile::tempdir().unwrap();
    let cache_dir = tmp.path().join("_derived/payloads");
    let spec = format!("{}\n{}\n{}\n{good}", server.addr, cache_dir.display(), if tmpfile { "1" } else { "0" });
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_fetch", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, spec)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let ready = server.first_bytes_sent.recv_timeout(Duration::from_secs(60));
    let deadline = Instant::now() + Duration::from_secs(30);
    while ready.is_ok() && !child_is_writing(child.id(), &cache_dir) && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
    }
    let writing = child_is_writing(child.id(), &cache_dir);
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(ready.is_ok() && writing, "child never started writing (ready {ready:?})");
    assert!(!status.success());
    let slot = forest_storage::slot_name("s3://bkt/big/payload.db");
    let left = names(&cache_dir);
    if tmpfile {
        assert!(left.is_empty(), "O_TMPFILE download left {left:?}");
    } else {
        // Only the hidden .part may remain, never the slot name; open() sweeps it.
        assert!(left.len() == 1 && left[0].starts_with(&format!(".{slot}.")) && left[0].ends_with(".part"), "{left:?}");
    }
    let client = Arc::new(S3Client::new(&options_for(&server.addr)).unwrap());
    let cache = PayloadCache::open(&cache_dir, Some(client)).unwrap().with_tmpfile(tmpfile);
    assert!(names(&cache_dir).is_empty(), "{:?}", names(&cache_dir));
    let p = cache.get("s3://bkt/big/payload.db", Some(&good)).unwrap();
    assert_eq!(fs::read(&p).unwrap(), *data);
    assert_eq!(names(&cache_dir), vec![slot]);
    assert_eq!(cache.downloads(), 1);
}

#[test]
fn killed_download_leaves_no_partial_file() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    kill_mid_download(true);
}

#[test]
fn killed_fallback_download_is_swept() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    kill_mid_download(false);
}

// ---------------------------------------------------------------- rclone

/// `Rclone::copy_listed` against rclone's `local` backend: the files that
/// exist arrive under their relative paths in one process; a missing file
/// and a name rclone cannot take from a list are absent, not an error.
#[test]
fn rclone_batch_copy_delivers_what_exists() {
    use forest_storage::{Rclone, RcloneLocation, RcloneOptions};
    if !Command::new("rclone").arg("version").output().is_ok_and(|o| o.status.success()) {
        forest_testkit::skip("rclone is not installed (Debian package rclone; .ci/run installs it)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let src = d.path().join("src");
    for (rel, body) in [("a.md", "alpha"), ("d/b b.md", "beta"), ("d/e/c.txt", "gamma"), ("odd\nname.md", "x")] {
        let p = src.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, body).unwrap();
    }
    let conf = d.path().join("rclone.conf");
    fs::write(&conf, "[disk]\ntype = local\n").unwrap();
    let mut opts = RcloneOptions::from_env();
    opts.config = Some(conf);
    opts.transfers = 2;
    let rclone = Rclone::new(opts);
    let loc = RcloneLocation::parse(&format!("rclone:disk:{}/", src.display())).unwrap();
    let staging = d.path().join("staging");
    let rels = ["a.md", "d/b b.md", "d/e/c.txt", "missing.md", "odd\nname.md"];
    let mut got = rclone.copy_listed(&loc, &rels, &staging).unwrap();
    got.sort();
    assert_eq!(got, vec!["a.md", "d/b b.md", "d/e/c.txt"]);
    assert_eq!(fs::read_to_string(staging.join("d/b b.md")).unwrap(), "beta");
    assert_eq!(fs::read_to_string(staging.join("d/e/c.txt")).unwrap(), "gamma");
    assert!(!staging.join("odd\nname.md").exists(), "a name with a line break is left to `cat`");
    assert!(!staging.with_extension("list").exists(), "the list file is removed");
}
