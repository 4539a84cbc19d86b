//! Generate a large passport forest directly (no sources, no Gardener):
//! `cargo run --release -p forest-ranger --example gen_forest -- DIR N
//! [FOLDERS] [MANAGED] [HEAT_ROWS]` (defaults: 180 folders, 10^5 managed
//! uncertain links, 10^6 heat rows).
//!
//! Layout: the "wide" forest of issue 14: FOLDERS branches of ~N/FOLDERS
//! leaves each under the master (deliberately over the 150-entry rule).
//! Leaves look like Gardener passports (source_path, blake3 source_hash,
//! `scent: derived` with its fingerprint, a part-of link) with titles and
//! summaries drawn from a Zipf-skewed vocabulary with English stopwords, so
//! `locate` queries drawn from them hit common and rare terms alike.
//! MANAGED leaves (spread evenly over all folders)
//! carry one uncertain `discovered-shortcut` link. Heat rows land on real
//! ids with a spread of values and ages, so a Ranger run has work.
//!
//! `gen_forest --augment DIR [MANAGED] [HEAT_ROWS]` instead adds the same
//! Ranger work to an existing forest (for example the 10^6-file
//! `bench/gardener.sh` forest, whose branches are already split): MANAGED
//! leaves spread over the whole forest get one uncertain
//! `discovered-shortcut` link (one fast-import commit of just those
//! files) and HEAT_ROWS heat rows land on its ids. Run `forest reindex`
//! afterwards (bench/forest-ops.sh does).
//!
//! Git: files are written to the work tree and streamed once into
//! `git fast-import` (one packed commit on top of `forest init`'s), then
//! `git read-tree HEAD` fills the index. No catalog is built: time
//! `forest reindex` on the result.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use forest_catalog::Trails;
use forest_derived::catalog::TRAILS_PATH;
use forest_derived::init::init_forest;
use forest_model::scent::summary_fingerprint;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The clock the heat is stamped against (and bench runs use).
const T0: f64 = 1_767_225_600.0;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pa", "qu", "ri", "do", "fe", "gu", "ha", "ji", "ko", "lu",
    "ma", "no", "pe", "si", "ta", "ul", "ve", "wo", "xa", "yo", "zu", "be", "ci", "dra", "ten", "mor", "lin", "gas",
    "pol", "ver", "est",
];
const STOPWORDS: [&str; 12] = ["the", "of", "and", "for", "with", "in", "to", "a", "on", "by", "from", "per"];

struct Vocab(Vec<String>);

impl Vocab {
    fn new(n: usize, rng: &mut Rng) -> Vocab {
        Vocab(
            (0..n)
                .map(|_| {
                    let len = 2 + rng.below(3);
                    (0..len).map(|_| SYLLABLES[rng.below(SYLLABLES.len())]).collect()
                })
                .collect(),
        )
    }

    /// A Zipf-like draw (squared uniform), with stopwords in between.
    fn words(&self, rng: &mut Rng, n: usize, stop: bool) -> String {
        let mut out: Vec<&str> = Vec::with_capacity(n * 2);
        for i in 0..n {
            if stop && i > 0 && rng.below(3) == 0 {
                out.push(STOPWORDS[rng.below(STOPWORDS.len())]);
            }
            let r = rng.below(self.0.len());
            out.push(&self.0[r * r / self.0.len()]);
        }
        out.join(" ")
    }
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

fn folder_id(f: usize) -> String {
    format!("b{f:03}")
}

fn leaf_id(f: usize, i: usize) -> String {
    format!("b{f:03}/n{i:07}")
}

struct Leaf {
    id: String,
    summary: String,
    text: String,
}

fn leaf(f: usize, i: usize, vocab: &Vocab, rng: &mut Rng, shortcut: Option<(String, f64)>) -> Leaf {
    let id = leaf_id(f, i);
    let (tw, sw) = (2 + rng.below(4), 10 + rng.below(10));
    let title = capitalize(&vocab.words(rng, tw, false));
    let summary = format!("{}.", capitalize(&vocab.words(rng, sw, true)));
    let mut links = format!("- rel: part-of\n  target: {}/_index\n", folder_id(f));
    if let Some((target, c)) = shortcut {
        links.push_str(&format!("- rel: discovered-shortcut\n  target: {target}\n  confidence: {c}\n"));
    }
    let hash = format!("{:016x}{:016x}{:016x}{:016x}", rng.next(), rng.next(), rng.next(), rng.next());
    let body = vocab.words(rng, 40, true);
    let text = format!(
        "---\nid: {id}\ntype: note\ntitle: {title}\nsummary: {summary}\ncreated: '2026-01-01'\n\
         updated: '2026-01-01'\nsource: ingest\nsource_path: folder{f:03}/file{i:07}.md\n\
         source_hash: blake3:{hash}\nscent: derived\nscent_hash: {}\nlinks:\n{links}---\n\n\
         # {title}\n\n> {summary}\n\n{body}.\n",
        summary_fingerprint(&summary)
    );
    Leaf { id, summary, text }
}

fn branch_text(f: usize, leaves: &[(String, String)], vocab: &Vocab, rng: &mut Rng) -> String {
    let title = format!("Folder {f} {}", vocab.words(rng, 2, false));
    let summary = format!("Folder {f}: {}.", vocab.words(rng, 8, true));
    let mut body = format!("# {title}\n\n> {summary}\n\n## Sub-branches\n\n## Direct bananas\n\n");
    for (id, s) in leaves {
        body.push_str(&format!("- [[{id}]] — {s}\n"));
    }
    format!(
        // The summary holds ": " (quoted: YAML would read a mapping).
        "---\nid: {}/_index\ntype: branch\ntitle: {title}\nsummary: '{summary}'\ncoverage: {} bananas, 0 \
         sub-branches\ncreated: '2026-01-01'\nupdated: '2026-01-01'\n---\n\n{body}",
        folder_id(f),
        leaves.len()
    )
}

fn master_text(folders: usize, n: usize) -> String {
    let summary = format!("Master branch of the generated forest, {folders} folders and {n} leaves.");
    let mut subs = String::new();
    for f in 0..folders {
        subs.push_str(&format!("- [[{}/_index]] — Folder {f}.\n", folder_id(f)));
    }
    format!(
        "---\nid: _index\ntype: branch\ntitle: Bench\nsummary: {summary}\ncoverage: 0 bananas, {folders} \
         sub-branches\ncreated: '2026-01-01'\nupdated: '2026-01-01'\n---\n\n# Bench\n\n> {summary}\n\n\
         ## Sub-branches\n\n{subs}\n## Direct bananas\n\n## Cross trails\n\n## Landmarks\n"
    )
}

/// Streams blobs to `git fast-import` and remembers (mark, path).
struct Import {
    child: std::process::Child,
    files: Vec<(usize, String)>,
}

impl Import {
    fn start(root: &Path) -> Res<Import> {
        let child = Command::new("git")
            .args(["fast-import", "--quiet", "--done"])
            .current_dir(root)
            .stdin(Stdio::piped())
            .spawn()?;
        Ok(Import { child, files: vec![] })
    }

    fn blob(&mut self, root: &Path, path: String, bytes: &[u8]) -> Res<()> {
        let p = root.join(&path);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        std::fs::write(&p, bytes)?;
        let mark = self.files.len() + 1;
        let w = self.child.stdin.as_mut().ok_or("fast-import stdin")?;
        write!(w, "blob\nmark :{mark}\ndata {}\n", bytes.len())?;
        w.write_all(bytes)?;
        w.write_all(b"\n")?;
        self.files.push((mark, path));
        Ok(())
    }

    /// Commit every blob on top of HEAD; `refresh_all` re-reads the whole
    /// index from the tree (a fresh forest), else only the written paths
    /// are updated in it (an existing forest keeps its index stat data).
    fn commit(mut self, root: &Path, message: &str, refresh_all: bool) -> Res<()> {
        let out = Command::new("git").args(["symbolic-ref", "HEAD"]).current_dir(root).output()?;
        let head_ref = String::from_utf8(out.stdout)?.trim().to_string();
        let out = Command::new("git").args(["rev-parse", "HEAD"]).current_dir(root).output()?;
        let parent = String::from_utf8(out.stdout)?.trim().to_string();
        let w = self.child.stdin.as_mut().ok_or("fast-import stdin")?;
        write!(
            w,
            "commit {head_ref}\ncommitter Forest Bench <bench@forest.invalid> {} +0000\ndata {}\n{message}\nfrom {parent}\n",
            T0 as i64,
            message.len()
        )?;
        for (mark, path) in &self.files {
            writeln!(w, "M 100644 :{mark} {path}")?;
        }
        w.write_all(b"\ndone\n")?;
        drop(self.child.stdin.take());
        if !self.child.wait()?.success() {
            return Err("git fast-import failed".into());
        }
        if refresh_all {
            let st = Command::new("git").args(["read-tree", "HEAD"]).current_dir(root).status()?;
            if !st.success() {
                return Err("git read-tree failed".into());
            }
            return Ok(());
        }
        let mut child =
            Command::new("git").args(["update-index", "--stdin"]).current_dir(root).stdin(Stdio::piped()).spawn()?;
        let w = child.stdin.as_mut().ok_or("update-index stdin")?;
        for (_, path) in &self.files {
            writeln!(w, "{path}")?;
        }
        drop(child.stdin.take());
        if !child.wait()?.success() {
            return Err("git update-index failed".into());
        }
        Ok(())
    }
}

/// Heat rows on `ids` (bucketed by amount and age: one transaction each).
fn deposit_heat(root: &Path, ids: &[String], heat_rows: usize) -> Res<()> {
    let mut trails = Trails::open(&root.join(TRAILS_PATH))?;
    let mut buckets: std::collections::BTreeMap<(u64, u64), Vec<String>> = Default::default();
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for k in 0..heat_rows {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let id = if k < ids.len() { ids[k].clone() } else { format!("gone/n{k}") };
        let h = x % 600;
        if h > 0 {
            buckets.entry((h, x % 90)).or_default().push(id);
        }
    }
    for ((h, age), ids) in buckets {
        trails.deposit_at(&ids, h as f64 / 1000.0, "", T0 - age as f64 * 86_400.0)?;
    }
    Ok(())
}

fn augment(args: &[String]) -> Res<()> {
    use forest_model::node::Node;
    use forest_model::yaml::Value;
    let dir = args.first().ok_or("usage: gen_forest --augment DIR [MANAGED] [HEAT_ROWS]")?;
    let root = Path::new(dir);
    let managed: usize = args.get(1).map_or(Ok(100_000), |s| s.parse())?;
    let heat_rows: usize = args.get(2).map_or(Ok(1_000_000), |s| s.parse())?;
    let t = Instant::now();
    let leaves: Vec<String> = forest_model::walk::node_paths(root)
        .into_iter()
        .filter(|p| !p.starts_with("_meta/") && !p.ends_with("_index.md"))
        .filter_map(|p| p.strip_suffix(".md").map(str::to_string))
        .collect();
    let n = leaves.len();
    let stride = n.checked_div(managed).map_or(usize::MAX, |s| s.max(1));
    let mut import = Import::start(root)?;
    let mut linked = 0;
    for (i, id) in leaves.iter().enumerate() {
        if !i.is_multiple_of(stride) || i / stride >= managed {
            continue;
        }
        let path = format!("{id}.md");
        let mut node = Node::parse(&std::fs::read_to_string(root.join(&path))?)?;
        let target = &leaves[(i * 7 + 3) % n];
        let c = if i.is_multiple_of(2) { 0.3 } else { 0.5 };
        let mut links = match node.front.get("links") {
            Some(Value::Sequence(s)) => s.clone(),
            _ => vec![],
        };
        let link = forest_model::yaml::parse_mapping(&format!(
            "rel: discovered-shortcut\ntarget: {target}\nconfidence: {c}\n"
        ))?;
        links.push(Value::Mapping(link));
        node.set("links", Value::Sequence(links));
        import.blob(root, path, node.to_text().as_bytes())?;
        linked += 1;
    }
    import.commit(root, "bench: uncertain shortcut links", false)?;
    let files_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    deposit_heat(root, &leaves, heat_rows)?;
    println!(
        "linked {linked} of {n} leaves in {files_s:.1}s; {heat_rows} heat rows in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--augment") {
        return augment(&args[1..]);
    }
    let dir = args.first().ok_or("usage: gen_forest DIR N [FOLDERS] [MANAGED] [HEAT_ROWS]")?;
    let root = Path::new(dir);
    let n: usize = args.get(1).map_or(Ok(1_000_000), |s| s.parse())?;
    let folders: usize = args.get(2).map_or(Ok(180), |s| s.parse())?;
    let managed: usize = args.get(3).map_or(Ok(100_000), |s| s.parse())?;
    let heat_rows: usize = args.get(4).map_or(Ok(1_000_000), |s| s.parse())?;
    let t = Instant::now();
    init_forest(root, "Bench")?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let vocab = Vocab::new(20_000, &mut rng);
    let per = n.div_ceil(folders);
    // Managed links spread over every folder: every `stride`-th leaf.
    let stride = n.checked_div(managed).map_or(usize::MAX, |s| s.max(1));
    let mut import = Import::start(root)?;
    let mut ids = Vec::with_capacity(n);
    let mut i = 0usize;
    for f in 0..folders {
        let mut entries = Vec::with_capacity(per);
        for _ in 0..per {
            if i >= n {
                break;
            }
            let shortcut = (i.is_multiple_of(stride) && i / stride < managed).then(|| {
                let j = (i * 7 + 3) % n;
                (leaf_id(j / per, j), if i.is_multiple_of(2) { 0.3 } else { 0.5 })
            });
            let l = leaf(f, i, &vocab, &mut rng, shortcut);
            import.blob(root, format!("{}.md", l.id), l.text.as_bytes())?;
            entries.push((l.id.clone(), l.summary));
            ids.push(l.id);
            i += 1;
        }
        let text = branch_text(f, &entries, &vocab, &mut rng);
        import.blob(root, format!("{}/_index.md", folder_id(f)), text.as_bytes())?;
    }
    import.blob(root, "_index.md".into(), master_text(folders, n).as_bytes())?;
    import.commit(root, "bench: generated forest", true)?;
    let files_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    deposit_heat(root, &ids, heat_rows)?;
    println!(
        "generated {n} leaves in {folders} folders ({managed} managed links) in {files_s:.1}s; \
         {heat_rows} heat rows in {:.1}s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
