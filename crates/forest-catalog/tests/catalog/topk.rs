//! The derived top-k index answers exactly what the FTS5 query answers,
//! and an incrementally maintained index equals a fresh rebuild.

use super::*;

/// xorshift64*: deterministic, dependency-free.
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

/// Common and rare words, punctuation, case, and non-ASCII words (which
/// take the FTS5 tokenizer path).
const WORDS: [&str; 24] = [
    "the", "of", "revenue", "Sales", "pipeline", "region", "Q1", "2026", "report", "data", "model", "forest", "branch",
    "notes,", "review.", "café", "Résumé", "naïve", "ops", "on-call", "A-101", "x", "ÉTÉ", "(draft)",
];

fn words(rng: &mut Rng, n: usize) -> String {
    (0..n)
        .map(|_| {
            let r = rng.below(WORDS.len());
            WORDS[r * r / WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn corpus(rng: &mut Rng, n: usize, tag: &str) -> Vec<NodeRow> {
    (0..n)
        .map(|i| {
            let ty = if i % 10 == 0 { "branch" } else { "note" };
            let id = if ty == "branch" { format!("{tag}{}/_index", i / 10) } else { format!("{tag}{}/n{i}", i / 10) };
            let (lt, ls) = (1 + rng.below(4), rng.below(12));
            let mut n = node(&id, ty, &words(rng, lt), &words(rng, ls));
            if i % 3 == 0 {
                n.tags = vec![words(rng, 1), words(rng, 1)];
            }
            if i % 7 == 0 {
                n.aliases = vec![words(rng, 2)];
            }
            n
        })
        .collect()
}

fn queries(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut q: Vec<String> = (0..n)
        .map(|_| {
            let len = 1 + rng.below(4);
            words(rng, len)
        })
        .collect();
    q.extend(["the the", "x - x", "-", "Sales, by REGION", "café review", "A-101", "on-call ops"].map(String::from));
    q
}

fn assert_same_ranking(cat: &Catalog, qs: &[String]) -> usize {
    let mut answered = 0;
    for q in qs {
        for limit in [1, 25, 60] {
            let fts = cat.ranked_fts(q, limit).unwrap();
            let ours = cat.ranked(q, limit).unwrap();
            assert_eq!(ours, fts, "query {q:?} limit {limit}");
            answered += usize::from(!fts.is_empty());
        }
    }
    answered
}

#[test]
fn topk_ranking_equals_fts5_bm25() {
    let (_d, path, _) = fresh();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut nodes = corpus(&mut rng, 600, "a");
    // Exact duplicates tie on rank: ties must keep rowid order.
    let mut dup = nodes[5].clone();
    dup.id = "dup/one".into();
    nodes.push(dup);
    let mut cat = Catalog::open(&path).unwrap();
    cat.rebuild(nodes).unwrap();
    assert!(cat.topk_usable().unwrap());
    let qs = queries(&mut rng, 150);
    assert!(assert_same_ranking(&cat, &qs) > 300, "most queries match something");
}

/// Terms computed by the producer (a rebuild's parse threads, with their
/// own tokenizers, non-ASCII words included) build the index the rebuild
/// builds when it computes them itself.
#[test]
fn terms_computed_on_other_threads_build_the_same_index() {
    let (d, path, _) = fresh();
    let mut rng = Rng(7);
    let nodes = corpus(&mut rng, 400, "a");
    let mut plain = Catalog::open(&path).unwrap();
    plain.rebuild(nodes.clone()).unwrap();
    let rows: Vec<RebuildRow> = std::thread::scope(|s| {
        let halves: Vec<_> = nodes
            .chunks(200)
            .map(|c| s.spawn(move || c.iter().cloned().map(RebuildRow::indexed).collect::<Vec<_>>()))
            .collect();
        halves.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert!(rows.iter().all(|r| r.terms.is_some()));
    let mut indexed = Catalog::open(&d.path().join("other/catalog.db")).unwrap();
    indexed.rebuild(rows).unwrap();
    assert_eq!(indexed.topk_dump().unwrap(), plain.topk_dump().unwrap());
    assert!(indexed.topk_usable().unwrap());
}

#[test]
fn incremental_topk_equals_rebuild() {
    let (d, path, _) = fresh();
    let mut rng = Rng(42);
    let mut forest = corpus(&mut rng, 300, "a");
    let mut inc = Catalog::open(&path).unwrap();
    inc.rebuild(forest.clone()).unwrap();

    // Edit some nodes, add some, remove some, in several transactions.
    for round in 0..4 {
        let mut edits = vec![];
        for _ in 0..20 {
            let i = rng.below(forest.len());
            forest[i].summary = words(&mut rng, 5);
            forest[i].title = words(&mut rng, 2);
            edits.push(forest[i].clone());
        }
        let added = corpus(&mut rng, 15, &format!("r{round}-"));
        forest.extend(added.iter().cloned());
        edits.extend(added);
        inc.upsert(&edits).unwrap();
        let gone: Vec<String> = (0..5).map(|_| forest.remove(rng.below(forest.len())).id.into_string()).collect();
        inc.remove(&gone).unwrap();
    }
    assert!(inc.topk_usable().unwrap());

    let mut reb = Catalog::open(&d.path().join("other/catalog.db")).unwrap();
    reb.rebuild(forest.clone()).unwrap();
    let want = reb.topk_dump().unwrap();
    assert_eq!(inc.topk_dump().unwrap(), want);
    let qs = queries(&mut rng, 60);
    assert_same_ranking(&inc, &qs);
    // Compaction folds the side tables into the blobs without a change.
    inc.compact_topk().unwrap();
    assert_eq!(inc.topk_dump().unwrap(), want);
    assert_same_ranking(&inc, &qs);
    assert_eq!(inc.dump().unwrap(), reb.dump().unwrap());
}

#[test]
fn a_suspended_index_is_rebuilt_from_the_fts_rows_equal_to_a_fresh_one() {
    let (d, path, _) = fresh();
    let mut rng = Rng(7);
    let mut forest = corpus(&mut rng, 200, "a");
    let mut cat = Catalog::open(&path).unwrap();
    cat.rebuild(forest.clone()).unwrap();
    // A bulk run: the index is suspended, writes skip it, FTS5 answers.
    cat.suspend_topk().unwrap();
    assert!(!cat.topk_usable().unwrap());
    let added = corpus(&mut rng, 300, "bulk");
    cat.upsert(&added).unwrap();
    forest.extend(added);
    let gone: Vec<String> = forest.drain(..10).map(|n| n.id.into_string()).collect();
    cat.remove(&gone).unwrap();
    assert!(!cat.topk_usable().unwrap(), "writes while suspended leave it suspended");
    assert_eq!(cat.rebuild_topk().unwrap(), Some(forest.len() as i64));
    assert!(cat.topk_usable().unwrap());
    assert_eq!(cat.rebuild_topk().unwrap(), None, "usable: nothing to do");
    let mut reb = Catalog::open(&d.path().join("other/catalog.db")).unwrap();
    reb.rebuild(forest).unwrap();
    assert_eq!(cat.topk_dump().unwrap(), reb.topk_dump().unwrap());
    let qs = queries(&mut rng, 40);
    assert_same_ranking(&cat, &qs);
}

#[test]
fn a_foreign_write_falls_back_to_fts5_until_rebuild() {
    let (_d, path, tp) = fresh();
    let mut cat = Catalog::open(&path).unwrap();
    cat.rebuild(sample_forest()).unwrap();
    assert!(cat.topk_usable().unwrap());
    // Another engine upserts with plain SQL (dialect §7.1): our index
    // does not know the new row, so it must stand aside.
    let conn = cat.connection();
    conn.execute("INSERT INTO nodes (id, kind, type, title, summary) VALUES ('z', 'banana', 'note', 'Zebra', 'z')", [])
        .unwrap();
    conn.execute("INSERT INTO nodes_fts (id, title, aliases, tags, summary) VALUES ('z', 'Zebra', '', '', 'z')", [])
        .unwrap();
    assert!(!cat.topk_usable().unwrap());
    let trails = Trails::open(&tp).unwrap();
    let res = locate(&cat, &trails, "zebra", &LocateOptions::default()).unwrap();
    assert_eq!(res.results[0].id, "z");
    // Our own later upserts keep it off; a rebuild brings it back.
    cat.upsert(&[node("y", "note", "Yak", "y")]).unwrap();
    assert!(!cat.topk_usable().unwrap());
    let nodes: Vec<NodeRow> = sample_forest();
    cat.rebuild(nodes).unwrap();
    assert!(cat.topk_usable().unwrap());
}

/// The fixture forest's catalog rows as far as ranking goes (title,
/// summary, tags, aliases, type), read with forest-model.
fn fixture_rows() -> Vec<NodeRow> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures/fixture-forest");
    let mut rows = vec![];
    for rel in forest_model::walk::node_paths(&root) {
        let id = rel.trim_end_matches(".md").to_string();
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let Ok(n) = forest_model::node::Node::parse(&text) else { continue };
        let ty = n.get_str("type").unwrap_or_else(|| "note".into());
        let mut row = node(&id, &ty, &n.title().unwrap_or_else(|| id.clone()), &n.summary().unwrap_or_default());
        row.tags = n.get_list("tags");
        row.aliases = n.get_list("aliases");
        rows.push(row);
    }
    rows
}

/// recall@5 and MRR (first expected node's reciprocal rank) of `locate`.
fn recall_mrr(cat: &Catalog, trails: &Trails, set: &str) -> (f64, f64) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../forests/fixtures").join(set);
    let qs: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (mut hit, mut total, mut rr, mut n) = (0usize, 0usize, 0.0f64, 0usize);
    for q in qs.as_array().unwrap() {
        let res = locate(cat, trails, q["question"].as_str().unwrap(), &LocateOptions::default()).unwrap();
        let got: Vec<&str> = res.results.iter().map(|r| r.id.as_str()).collect();
        let want: Vec<&str> = q["expected_nodes"].as_array().unwrap().iter().filter_map(|e| e.as_str()).collect();
        total += want.len();
        hit += want.iter().filter(|w| got.contains(w)).count();
        rr += got.iter().position(|g| want.contains(g)).map_or(0.0, |p| 1.0 / (p as f64 + 1.0));
        n += 1;
    }
    (hit as f64 / total as f64, rr / n as f64)
}

#[test]
fn fixture_questions_rank_the_same_with_and_without_the_index() {
    let (_d, path, tp) = fresh();
    let mut cat = Catalog::open(&path).unwrap();
    cat.rebuild(fixture_rows()).unwrap();
    let trails = Trails::open(&tp).unwrap();
    assert!(cat.topk_usable().unwrap());
    let after: Vec<(f64, f64)> =
        ["questions-v1.json", "questions-demo.json"].iter().map(|s| recall_mrr(&cat, &trails, s)).collect();
    // Any write outside our writers sends locate back to the FTS5 query.
    cat.connection().execute("UPDATE nodes SET title = title WHERE rowid = 1", []).unwrap();
    assert!(!cat.topk_usable().unwrap());
    let before: Vec<(f64, f64)> =
        ["questions-v1.json", "questions-demo.json"].iter().map(|s| recall_mrr(&cat, &trails, s)).collect();
    println!(
        "recall@5/MRR FTS5 query: v1 {:?}, demo {:?}; top-k index: v1 {:?}, demo {:?}",
        before[0], before[1], after[0], after[1]
    );
    assert_eq!(after, before);
    assert!(after.iter().all(|(r, _)| *r > 0.0), "the question sets match something");
}

/// Rows of the top-k side tables: (dead documents, delta postings).
fn side_rows(cat: &Catalog) -> (i64, i64) {
    let c = cat.connection();
    let dead = c.query_row("SELECT COUNT(*) FROM topk_dead", [], |r| r.get(0)).unwrap();
    let delta = c.query_row("SELECT COUNT(*) FROM topk_delta", [], |r| r.get(0)).unwrap();
    (dead, delta)
}

#[test]
fn a_row_whose_search_columns_did_not_change_keeps_its_postings() {
    let (d, path, _) = fresh();
    let mut rng = Rng(7);
    let mut forest = corpus(&mut rng, 200, "m");
    let mut inc = Catalog::open(&path).unwrap();
    inc.rebuild(forest.clone()).unwrap();
    assert_eq!(side_rows(&inc), (0, 0));

    // What a Ranger run changes: links, `updated`; plus body facts.
    for n in forest.iter_mut().take(120) {
        n.updated = Some("2027-06-01".into());
        n.links.push(CatalogLink::new("related-to", "m-0"));
        n.body_tokens += 1;
    }
    inc.upsert(&forest[..120]).unwrap();
    assert_eq!(side_rows(&inc), (0, 0), "no dead documents, no delta postings");
    assert!(inc.topk_usable().unwrap());

    // A search column that changes still goes through the index.
    forest[3].summary = words(&mut rng, 4);
    forest[5].tags.push("fresh-tag".into());
    inc.upsert(&[forest[3].clone(), forest[5].clone()]).unwrap();
    assert_eq!(side_rows(&inc).0, 2);

    let mut reb = Catalog::open(&d.path().join("other/catalog.db")).unwrap();
    reb.rebuild(forest.clone()).unwrap();
    assert_eq!(inc.dump().unwrap(), reb.dump().unwrap());
    assert_eq!(inc.topk_dump().unwrap(), reb.topk_dump().unwrap());
    assert_same_ranking(&inc, &queries(&mut rng, 40));
}
