//! Integration tests of forest-catalog: catalog maintenance, locate ranking
//! and the heat store.

use forest_catalog::{
    locate_simple, pyjson, Catalog, CatalogLink, CatalogState, LocateQuery, LocateResult, NodeRow, RebuildReason,
    RebuildRow, Scope, Trails,
};
use std::path::PathBuf;
use tempfile::TempDir;

/// The CLI's words for a `locate`, as these tests write them.
#[derive(Debug, Clone)]
struct LocateOptions {
    k: usize,
    scope: String,
    type_filter: Option<String>,
    alpha: f64,
    session: Option<String>,
    include_outline: bool,
}

impl Default for LocateOptions {
    fn default() -> Self {
        LocateOptions {
            k: 5,
            scope: "all".into(),
            type_filter: None,
            alpha: 0.3,
            session: None,
            include_outline: false,
        }
    }
}

/// BM25 `locate` (no canopy) with the CLI's hooks and budget.
fn locate(cat: &Catalog, trails: &Trails, q: &str, o: &LocateOptions) -> forest_catalog::Result<LocateResult> {
    let query = LocateQuery {
        text: q.to_string(),
        k: o.k,
        scope: Scope::parse(&o.scope)?,
        type_filter: o.type_filter.clone(),
        alpha: o.alpha,
        include_outline: o.include_outline,
        ..LocateQuery::default()
    };
    locate_simple(cat, trails, o.session.as_deref(), &query, || None)
}

fn node(id: &str, ty: &str, title: &str, summary: &str) -> NodeRow {
    NodeRow::new(id, ty, title, summary)
}

fn fresh() -> (TempDir, PathBuf, PathBuf) {
    let dir = TempDir::new().unwrap();
    let cat = dir.path().join("_derived/catalog.db");
    let trails = dir.path().join("_derived/trails.db");
    (dir, cat, trails)
}

/// A small forest: master, two branches, leaves with links and aliases.
fn sample_forest() -> Vec<NodeRow> {
    let mut master = node("_index", "branch", "Acme forest", "Everything Acme knows.");
    master.coverage = Some("1 banana, 2 sub-branches".into());
    let mut sales = node("sales/_index", "branch", "Sales", "Sales pipeline and targets.");
    sales.coverage = Some("3 bananas, 0 sub-branches.".into());
    let mut eng = node("eng/_index", "branch", "Engineering", "Architecture decisions.");
    eng.coverage = Some("two notes".into());
    let mut targets =
        node("sales/targets-291", "document", "Regional targets", "Quarterly revenue targets per region for 2026.");
    targets.aliases = vec!["BE-291".into(), "291".into()];
    targets.tags = vec!["revenue".into(), "targets".into()];
    targets.created = Some("2026-01-02".into());
    targets.updated = Some("2026-02-03".into());
    targets.body_tokens = 420;
    targets.outline = vec!["Scope".into(), "Numbers".into()];
    targets.body_hash = forest_catalog::body_hash_of("body of targets");
    targets.links = vec![
        CatalogLink::new("part-of", "sales/_index"),
        CatalogLink { rel: "related-to".into(), target: "eng/adr-0002".into(), confidence: 0.3 },
    ];
    let mut pipeline =
        node("sales/pipeline", "note", "Pipeline review", "Weekly pipeline review with revenue forecast.");
    pipeline.source = Some("ingest".into());
    pipeline.origin = Some("file:///srv/sales/pipeline.docx".into());
    pipeline.links = vec![CatalogLink::new("related-to", "sales/targets-291")];
    let mut adr = node(
        "eng/adr-0002",
        "concept",
        "ADR-0002 Résumé storage",
        "Decision to store résumés in the document service.",
    );
    adr.confidence = 0.7;
    adr.links = vec![CatalogLink::new("related-to", "sales/targets-291")];
    let schema = node("_meta/schema", "note", "Schema", "Declared node types.");
    vec![master, sales, eng, targets, pipeline, adr, schema]
}

mod catalog {
    use super::*;

    /// FTS rows are staged per transaction and written by two statements:
    /// what lands must be exactly what per-row writes gave, whatever the
    /// text holds and however a call mixes updates, duplicates and removals.
    #[test]
    fn staged_fts_writes_land_exactly() {
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        cat.rebuild(sample_forest()).unwrap();
        let odd = [
            "quote \" and backslash \\ and 'single'",
            "line\nbreak\ttab",
            "nul\u{0}inside",
            "émoji 🌲 and ünïcode",
            "",
            "$[0] ->> json-looking [1, 2]",
        ];
        let mut batch: Vec<NodeRow> = odd
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut n = node(&format!("odd/n{i}"), "note", t, &format!("{t} summary"));
                n.tags = vec![t.to_string()];
                n.aliases = vec![format!("alias {t}")];
                n
            })
            .collect();
        // The same id twice in one call (the first is replaced), and an
        // update of a node written earlier.
        batch.push(node("odd/n1", "note", "second version", "replaces the first"));
        let mut upd = sample_forest()[1].clone();
        upd.title = "updated title".into();
        batch.push(upd.clone());
        cat.upsert(&batch).unwrap();
        // Remove one node and one never written.
        cat.remove(&["odd/n3".to_string(), "never/was".to_string()]).unwrap();
        // Re-add the removed one in a later call.
        cat.upsert(&[node("odd/n3", "note", "back again", "re-added")]).unwrap();

        // The same end state written fresh.
        let mut want_nodes: Vec<NodeRow> = sample_forest();
        want_nodes[1] = upd;
        for (i, n) in batch.iter().enumerate().take(odd.len()) {
            if i != 1 && i != 3 {
                want_nodes.push(n.clone());
            }
        }
        want_nodes.push(node("odd/n1", "note", "second version", "replaces the first"));
        want_nodes.push(node("odd/n3", "note", "back again", "re-added"));
        let (_d2, path2, _) = fresh();
        let mut reb = Catalog::open(&path2).unwrap();
        reb.rebuild(want_nodes).unwrap();
        assert_eq!(cat.dump().unwrap(), reb.dump().unwrap());
        // FTS5's own view agrees with its content, and rowids stay aligned.
        cat.connection().execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')", []).unwrap();
        let misaligned: i64 = cat
            .connection()
            .query_row(
                "SELECT COUNT(*) FROM nodes n LEFT JOIN nodes_fts f ON f.rowid = n.rowid WHERE f.id IS NOT n.id",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(misaligned, 0);
        let nul: String =
            cat.connection().query_row("SELECT title FROM nodes_fts WHERE id = 'odd/n2'", [], |r| r.get(0)).unwrap();
        assert_eq!(nul, odd[2]);
    }

    #[test]
    fn schema_matches_dialect() {
        let (_d, path, _) = fresh();
        let cat = Catalog::open(&path).unwrap();
        let conn = cat.connection();
        let cols: Vec<String> = conn
            .prepare("PRAGMA table_info(nodes)")
            .unwrap()
            .query_map([], |r| r.get(1))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            cols.join(","),
            "id,kind,type,title,summary,tags,aliases,created,updated,confidence,source,\
             entity_kind,payload,payload_type,payload_hash,parent,trail,coverage,body_tokens,\
             outline,stale,body_hash,origin"
        );
        let fts_sql: String =
            conn.query_row("SELECT sql FROM sqlite_master WHERE name = 'nodes_fts'", [], |r| r.get(0)).unwrap();
        assert!(fts_sql.contains("id UNINDEXED, title, aliases, tags, summary"));
        assert!(fts_sql.contains("unicode61 remove_diacritics 2"));
        for table in ["edges", "moves", "sniff_memo", "embed_memo"] {
            let n: i64 = conn
                .query_row("SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name=?1", [table], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 1, "{table}");
        }
        let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
    }

    #[test]
    fn rows_carry_computed_fields() {
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        assert_eq!(cat.rebuild(sample_forest()).unwrap(), 7);
        let t = cat.get("sales/targets-291").unwrap().unwrap();
        assert_eq!(t.kind, "banana");
        assert_eq!(t.parent.as_deref(), Some("sales/_index"));
        assert_eq!(t.trail, vec!["_index", "sales/_index"]);
        assert_eq!(t.aliases, vec!["BE-291", "291"]);
        assert_eq!(t.outline, vec!["Scope", "Numbers"]);
        let raw_tags: String = cat
            .connection()
            .query_row("SELECT tags FROM nodes WHERE id = 'sales/targets-291'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(raw_tags, r#"["revenue", "targets"]"#);
        let master = cat.get("_index").unwrap().unwrap();
        assert_eq!(master.kind, "branch");
        assert_eq!(master.parent, None);
        assert!(master.trail.is_empty());
        let schema = cat.get("_meta/schema").unwrap().unwrap();
        assert_eq!(schema.trail, vec!["_index"]);
        assert_eq!(schema.created.as_deref(), Some(""));
        let out = cat.edges_out("sales/targets-291").unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[1].rel, "related-to");
        assert_eq!(out[1].confidence, 0.3);
        assert_eq!(cat.edges_in("sales/targets-291").unwrap().len(), 2);
        assert_eq!(cat.degree("sales/targets-291").unwrap(), 4);
        assert_eq!(cat.count_nodes().unwrap(), 7);
    }

    #[test]
    fn rebuild_replaces_everything() {
        let (d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        cat.rebuild(sample_forest()).unwrap();
        let mut kept = sample_forest();
        kept.truncate(3);
        kept[0].body_hash = "h0".into();
        cat.connection()
            .execute(
                "INSERT INTO sniff_memo (term, node_id, body_hash) VALUES \
                 ('t', '_index', 'h0'), ('t', 'sales/pipeline', ''), ('t', 'eng/_index', 'old')",
                [],
            )
            .unwrap();
        assert_eq!(cat.rebuild(kept.clone()).unwrap(), 3);
        let mut other = Catalog::open(&d.path().join("b.db")).unwrap();
        other.rebuild(kept).unwrap();
        assert_eq!(cat.dump().unwrap(), other.dump().unwrap());
        let memo: i64 = cat.connection().query_row("SELECT COUNT(*) FROM sniff_memo", [], |r| r.get(0)).unwrap();
        assert_eq!(memo, 1, "only the memo of a live, unchanged body survives");
    }

    #[test]
    fn rebuild_fts_rows_equal_upserted_ones_for_any_tag_text() {
        // A rebuild writes its FTS rows from the stored JSON lists; upsert
        // joins the node's own. Quotes, escapes, non-ASCII, astral
        // characters, empty lists and empty strings must come out the same.
        let (d, path, _) = fresh();
        let mut nodes = Vec::new();
        for (i, (tags, aliases)) in [
            (vec![], vec![]),
            (vec!["a \"quoted\" tag".to_string(), "back\\slash".into()], vec!["".into(), "tab\there".into()]),
            (
                vec!["naïve".into(), "日本語".into(), "🌲 forest".into()],
                vec!["line\nbreak".into(), "\u{7f}\u{1}".into()],
            ),
        ]
        .into_iter()
        .enumerate()
        {
            let mut n = node(&format!("b/n{i}"), "note", &format!("Title {i}"), "A summary.");
            n.tags = tags;
            n.aliases = aliases;
            nodes.push(n);
        }
        let mut rebuilt = Catalog::open(&path).unwrap();
        rebuilt.rebuild(nodes.clone()).unwrap();
        let mut upserted = Catalog::open(&d.path().join("u.db")).unwrap();
        upserted.upsert(&nodes).unwrap();
        let fts = rebuilt.dump().unwrap().fts;
        assert_eq!(fts, upserted.dump().unwrap().fts);
        let third = fts.iter().find(|r| r.id == "b/n2").unwrap();
        assert_eq!(third.tags, "naïve 日本語 🌲 forest");
        assert_eq!(third.aliases, "line\nbreak \u{7f}\u{1}");
        let hit: String = rebuilt
            .connection()
            .query_row("SELECT id FROM nodes_fts WHERE nodes_fts MATCH 'quoted'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(hit, "b/n1");
    }

    #[test]
    fn a_fresh_build_equals_an_in_place_rebuild_and_leaves_a_wal_catalog() {
        let (d, path, _) = fresh();
        // whatever was there (here: garbage and a stale journal) is replaced
        let derived = path.parent().unwrap().to_path_buf();
        std::fs::create_dir_all(&derived).unwrap();
        std::fs::write(&path, b"not a database".repeat(50)).unwrap();
        std::fs::write(derived.join("catalog.db-wal"), b"stale").unwrap();
        std::fs::write(derived.join("catalog.db.building"), b"left by a crash").unwrap();
        let (fresh_cat, n) = Catalog::rebuild_fresh(&path, sample_forest()).unwrap();
        assert_eq!(n, sample_forest().len());
        let mut in_place = Catalog::open(&d.path().join("b.db")).unwrap();
        in_place.rebuild(sample_forest()).unwrap();
        assert_eq!(fresh_cat.dump().unwrap(), in_place.dump().unwrap());
        let mode: String = fresh_cat.connection().query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
        assert_eq!(mode, "wal");
        let hash: String = fresh_cat
            .connection()
            .query_row("SELECT v FROM nodes_fts_config WHERE k = 'hashsize'", [], |r| r.get(0))
            .map(|v: i64| v.to_string())
            .unwrap();
        assert_eq!(hash, "1048576", "the bulk load's FTS5 buffer is not left to later writers");
        assert!(!derived.join("catalog.db.building").exists());
        drop(fresh_cat);
        assert!(matches!(Catalog::open_checked(&path).unwrap(), CatalogState::Ready(_)));
    }

    #[test]
    fn fresh_builds_that_race_leave_one_sound_catalog() {
        let (_d, path, _) = fresh();
        let counts: Vec<usize> = std::thread::scope(|s| {
            let workers: Vec<_> =
                (0..3).map(|_| s.spawn(|| Catalog::rebuild_fresh(&path, sample_forest()).unwrap().1)).collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        assert!(counts.iter().all(|n| *n == sample_forest().len()), "{counts:?}");
        let mut alone = Catalog::open(&path.with_file_name("alone.db")).unwrap();
        alone.rebuild(sample_forest()).unwrap();
        match Catalog::open_checked(&path).unwrap() {
            CatalogState::Ready(c) => assert_eq!(c.dump().unwrap(), alone.dump().unwrap()),
            other => panic!("{other:?}"),
        }
    }
    #[test]
    fn duplicate_ids_in_rebuild_keep_the_first() {
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        let a = node("x", "note", "First", "one");
        let b = node("x", "note", "Second", "two");
        assert_eq!(cat.rebuild(vec![a, b]).unwrap(), 1);
        let dump = cat.dump().unwrap();
        assert_eq!(dump.nodes[0].title, "First");
        assert_eq!(dump.fts.len(), 1);
    }

    #[test]
    fn incremental_maintenance_equals_rebuild() {
        let (d, path, _) = fresh();
        let mut inc = Catalog::open(&path).unwrap();
        let mut forest = sample_forest();
        inc.rebuild(forest.clone()).unwrap();

        // Edit a summary and links, add nodes, one at a time and in batches.
        forest[4].summary = "Pipeline review, now monthly.".into();
        forest[4].links.push(CatalogLink::new("mentioned-in", "eng/_index"));
        inc.upsert(&[forest[4].clone()]).unwrap();
        let mut new_a = node("eng/runbook", "note", "Runbook", "On-call runbook.");
        new_a.tags = vec!["ops".into()];
        let new_b = node("eng/glossary", "concept", "Glossary", "Terms used by engineering.");
        forest.push(new_a.clone());
        forest.push(new_b.clone());
        inc.upsert(&[new_a, new_b]).unwrap();

        // Remove a node.
        let gone = forest.remove(forest.iter().position(|n| n.id == "eng/glossary").unwrap());
        assert_eq!(inc.remove(std::slice::from_ref(&gone.id.to_string())).unwrap(), 1);

        // Transplant: the ADR moves, keeping a waymark.
        let idx = forest.iter().position(|n| n.id == "eng/adr-0002").unwrap();
        let mut moved = forest.remove(idx);
        let old = moved.id.to_string();
        moved.id = "eng/decisions/adr-0002".into();
        moved.moved_from = vec![old.clone()];
        moved.aliases.push(old.clone());
        forest.push(moved.clone());
        inc.remove(std::slice::from_ref(&old)).unwrap();
        inc.upsert(&[moved]).unwrap();
        // Re-upserting an unchanged node changes nothing.
        inc.upsert(&[forest[0].clone()]).unwrap();
        assert_eq!(inc.moved_to(&old).unwrap().as_deref(), Some("eng/decisions/adr-0002"));

        let fresh_path = d.path().join("other/catalog.db");
        let mut reb = Catalog::open(&fresh_path).unwrap();
        reb.rebuild(forest.clone()).unwrap();
        let (a, b) = (inc.dump().unwrap(), reb.dump().unwrap());
        assert_eq!(a, b);
        assert_eq!(a.nodes.len(), forest.len());
        assert_eq!(a.fts.len(), forest.len());

        // Same catalog state → same ranking.
        let trails = Trails::open(&d.path().join("trails.db")).unwrap();
        let opts = LocateOptions::default();
        for q in ["pipeline", "revenue targets", "resume", "runbook"] {
            assert_eq!(locate(&inc, &trails, q, &opts).unwrap(), locate(&reb, &trails, q, &opts).unwrap(), "{q}");
        }
    }

    #[test]
    fn foreign_fts_rowids_are_maintained_correctly() {
        // Another engine inserts FTS rows with their own rowids; upsert and
        // remove must still find and replace the right FTS row.
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        let conn = cat.connection();
        for (i, id) in ["a", "b", "c"].iter().enumerate() {
            conn.execute("INSERT INTO nodes (id, kind, type, title, summary) VALUES (?1,'banana','note',?1,'s')", [id])
                .unwrap();
            // Deliberately misaligned rowids: a, b, c -> 3, 2, 1.
            conn.execute(
                "INSERT INTO nodes_fts (rowid, id, title, aliases, tags, summary) VALUES (?1,?2,?2,'','','s')",
                rusqlite::params![3 - i as i64, id],
            )
            .unwrap();
        }
        cat.upsert(&[node("a", "note", "Alpha", "new")]).unwrap();
        cat.upsert(&[node("d", "note", "Delta", "new")]).unwrap();
        cat.remove(&["b".to_string()]).unwrap();
        let dump = cat.dump().unwrap();
        let ids: Vec<&str> = dump.fts.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids, vec!["a", "c", "d"]);
        assert_eq!(dump.fts[0].title, "Alpha");
        assert_eq!(dump.nodes.len(), 3);
        // One call mixing staged rows with a foreign row's replacement: the
        // rowid FTS5 picks for the foreign one must not collide with them.
        cat.upsert(&[
            node("e", "note", "Echo", "new"),
            node("c", "note", "Gamma", "new"),
            node("f", "note", "Fox", "new"),
        ])
        .unwrap();
        let dump = cat.dump().unwrap();
        let got: Vec<(&str, &str)> = dump.fts.iter().map(|f| (f.id.as_str(), f.title.as_str())).collect();
        assert_eq!(got, vec![("a", "Alpha"), ("c", "Gamma"), ("d", "Delta"), ("e", "Echo"), ("f", "Fox")]);
        cat.connection().execute("INSERT INTO nodes_fts(nodes_fts) VALUES('integrity-check')", []).unwrap();
    }

    #[test]
    fn open_checked_reports_what_needs_a_rebuild() {
        let (_d, path, _) = fresh();
        match Catalog::open_checked(&path).unwrap() {
            CatalogState::NeedsRebuild(RebuildReason::Missing) => {}
            other => panic!("{other:?}"),
        }
        assert!(!path.exists(), "open_checked must not create the file");

        let mut cat = Catalog::open(&path).unwrap();
        drop(cat);
        match Catalog::open_checked(&path).unwrap() {
            CatalogState::NeedsRebuild(RebuildReason::Empty) => {}
            other => panic!("{other:?}"),
        }

        cat = Catalog::open(&path).unwrap();
        cat.rebuild(sample_forest()).unwrap();
        drop(cat);
        assert!(matches!(Catalog::open_checked(&path).unwrap(), CatalogState::Ready(_)));

        // FTS out of step with nodes.
        let cat = Catalog::open(&path).unwrap();
        cat.connection().execute("DELETE FROM nodes_fts WHERE id = '_index'", []).unwrap();
        drop(cat);
        assert!(matches!(
            Catalog::open_checked(&path).unwrap(),
            CatalogState::NeedsRebuild(RebuildReason::Inconsistent(_))
        ));

        // Garbage bytes.
        for suffix in ["-wal", "-shm"] {
            let mut p = path.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(p);
        }
        std::fs::write(&path, b"this is not a sqlite database at all, just garbage bytes....".repeat(100)).unwrap();
        match Catalog::open_checked(&path).unwrap() {
            CatalogState::NeedsRebuild(RebuildReason::Corrupt(msg)) => assert!(!msg.is_empty()),
            other => panic!("{other:?}"),
        }
        let mut cat = Catalog::recreate(&path).unwrap();
        cat.rebuild(sample_forest()).unwrap();
        drop(cat);
        assert!(matches!(Catalog::open_checked(&path).unwrap(), CatalogState::Ready(_)));

        // A catalog from before the body leads (or the other engine's).
        let cat = Catalog::open(&path).unwrap();
        cat.connection().execute("DROP TABLE node_leads", []).unwrap();
        drop(cat);
        assert!(matches!(
            Catalog::open_checked(&path).unwrap(),
            CatalogState::NeedsRebuild(RebuildReason::Outdated(_))
        ));
    }

    #[test]
    fn body_leads_follow_their_nodes() {
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        let mut a = node("a", "note", "Alpha", "first");
        a.lead = "alpha body words".into();
        let b = node("b", "note", "Beta", "second");
        cat.upsert(&[a.clone(), b]).unwrap();
        let leads = |cat: &Catalog| -> Vec<(String, String)> {
            cat.scent_page("", 10).unwrap().into_iter().map(|r| (r.id, r.lead)).collect()
        };
        assert_eq!(leads(&cat), vec![("a".into(), "alpha body words".into()), ("b".into(), String::new())]);
        a.lead = "rewritten".into();
        cat.upsert(&[a.clone()]).unwrap();
        assert_eq!(leads(&cat)[0].1, "rewritten", "a body change with the same scent rewrites the lead");
        a.lead.clear();
        cat.upsert(&[a]).unwrap();
        assert_eq!(leads(&cat)[0].1, "");
        cat.remove(&["b".to_string()]).unwrap();
        let kept: i64 = cat.connection().query_row("SELECT COUNT(*) FROM node_leads", [], |r| r.get(0)).unwrap();
        assert_eq!((leads(&cat).len(), kept), (1, 0));
    }

    #[test]
    fn candidates_skip_branches_and_excluded_ids() {
        let (_d, path, _) = fresh();
        let mut cat = Catalog::open(&path).unwrap();
        cat.rebuild(sample_forest()).unwrap();
        let all = cat.candidates("sales revenue pipeline", 10, &[]).unwrap();
        let ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
        assert!(ids.contains(&"sales/pipeline"));
        assert!(ids.contains(&"sales/targets-291"));
        assert!(!ids.contains(&"sales/_index"), "{ids:?}");
        let ex = cat.candidates("sales revenue pipeline", 10, &["sales/pipeline".into()]).unwrap();
        assert!(ex.iter().all(|c| c.id != "sales/pipeline"));
        assert_eq!(cat.candidates("sales revenue pipeline", 1, &[]).unwrap().len(), 1);
        assert!(cat.candidates("   ", 5, &[]).unwrap().is_empty());
    }
}

mod ranking {
    use super::*;

    fn setup(nodes: Vec<NodeRow>) -> (TempDir, Catalog, Trails) {
        let (d, cp, tp) = fresh();
        let mut cat = Catalog::open(&cp).unwrap();
        cat.rebuild(nodes).unwrap();
        let trails = Trails::open(&tp).unwrap();
        (d, cat, trails)
    }

    #[test]
    fn result_items_follow_the_wire_shape() {
        let (_d, cat, trails) = setup(sample_forest());
        let res = locate(&cat, &trails, "BE-291", &LocateOptions::default()).unwrap();
        assert_eq!(res.results[0].id, "sales/targets-291");
        assert_eq!(res.results[0].score, 1.0);
        assert_eq!(res.results[0].kind, "note");
        assert_eq!(res.results[0].trail, vec!["_index", "sales/_index"]);
        assert_eq!(res.results[0].body_tokens, 420);
        let v = serde_json::to_value(&res).unwrap();
        let keys: Vec<&str> = v["results"][0].as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "kind", "type", "title", "summary", "trail", "score", "heat", "body_tokens"]);
        assert!(v.get("searched").is_none() && v.get("hint").is_none());

        // Diacritics fold; branch coverage parses or stays raw.
        let r = locate(&cat, &trails, "resume", &LocateOptions::default()).unwrap();
        assert_eq!(r.results[0].id, "eng/adr-0002");
        let opts = LocateOptions { scope: "branches".into(), ..Default::default() };
        let r = locate(&cat, &trails, "sales engineering acme", &opts).unwrap();
        let v = serde_json::to_value(&r).unwrap();
        for item in v["results"].as_array().unwrap() {
            assert_eq!(item["kind"], "branch");
            match item["id"].as_str().unwrap() {
                "sales/_index" => {
                    assert_eq!(item["coverage"], serde_json::json!({"notes": 3, "branches": 0}))
                }
                "_index" => {
                    assert_eq!(item["coverage"], serde_json::json!({"notes": 1, "branches": 2}))
                }
                "eng/_index" => assert_eq!(item["coverage"], "two notes"),
                other => panic!("{other}"),
            }
        }
        assert_eq!(r.results.len(), 3);
        let with_outline = LocateOptions { include_outline: true, ..Default::default() };
        let r = locate(&cat, &trails, "BE-291", &with_outline).unwrap();
        assert_eq!(r.results[0].outline.as_deref().unwrap(), ["Scope", "Numbers"]);
    }

    #[test]
    fn scope_and_type_filters_apply_after_retrieval() {
        let (_d, cat, trails) = setup(sample_forest());
        for scope in ["notes", "bananas"] {
            let opts = LocateOptions { scope: scope.into(), ..Default::default() };
            let r = locate(&cat, &trails, "sales pipeline revenue", &opts).unwrap();
            assert!(!r.results.is_empty());
            assert!(r.results.iter().all(|i| i.kind == "note"));
        }
        let opts = LocateOptions { type_filter: Some("document".into()), ..Default::default() };
        let r = locate(&cat, &trails, "sales pipeline revenue", &opts).unwrap();
        assert_eq!(r.results.len(), 1);
        assert_eq!(r.results[0].node_type, "document");
        let bad = LocateOptions { scope: "leaves".into(), ..Default::default() };
        let err = locate(&cat, &trails, "sales", &bad).unwrap_err();
        assert_eq!(err.code(), "E_SCHEMA");
        assert!(err.to_string().contains("branches"));
    }

    fn near_equal_pair() -> Vec<NodeRow> {
        vec![
            node("a/first", "note", "Budget", "Quarterly budget overview."),
            node("a/second", "note", "Budget plan", "Quarterly budget overview."),
        ]
    }

    #[test]
    fn heat_flips_near_equal_hits_and_alpha_zero_disables_it() {
        let (_d, cat, mut trails) = setup(near_equal_pair());
        let cold = locate(&cat, &trails, "budget", &LocateOptions::default()).unwrap();
        assert_eq!(cold.results[0].id, "a/first");
        let gap = cold.results[0].score / cold.results[1].score;
        assert!(gap > 1.0 && gap < 1.3, "pair not near-equal: {gap}");

        trails.deposit(&["a/second".into()], 1.0, "").unwrap();
        let warm = locate(&cat, &trails, "budget", &LocateOptions::default()).unwrap();
        assert_eq!(warm.results[0].id, "a/second");
        assert_eq!(warm.results[0].heat, 1.0);
        let expected = pyjson::round4(cold.results[1].score * 1.3);
        assert!((warm.results[0].score - expected).abs() < 2e-4);

        let off = LocateOptions { alpha: 0.0, ..Default::default() };
        let r = locate(&cat, &trails, "budget", &off).unwrap();
        assert_eq!(r.results[0].id, "a/first");
        assert_eq!(r.results[1].heat, 1.0, "heat still reported");
    }

    #[test]
    fn session_heat_counts_half() {
        let (_d, cat, mut trails) = setup(near_equal_pair());
        trails.deposit(&["a/second".into()], 0.4, "hunt-1").unwrap();
        let opts = LocateOptions { session: Some("hunt-1".into()), ..Default::default() };
        let r = locate(&cat, &trails, "budget", &opts).unwrap();
        let second = r.results.iter().find(|i| i.id == "a/second").unwrap();
        assert_eq!(second.heat, 0.2);
        let other = locate(&cat, &trails, "budget", &LocateOptions::default()).unwrap();
        assert!(other.results.iter().all(|i| i.heat == 0.0));
    }

    #[test]
    fn truncated_when_more_candidates_than_k() {
        let nodes: Vec<NodeRow> =
            (0..8).map(|i| node(&format!("n/{i}"), "note", &format!("Widget {i}"), "A widget.")).collect();
        let (_d, cat, trails) = setup(nodes);
        let opts = LocateOptions { k: 3, ..Default::default() };
        let r = locate(&cat, &trails, "widget", &opts).unwrap();
        assert_eq!(r.results.len(), 3);
        assert!(r.truncated);
        let opts = LocateOptions { k: 8, ..Default::default() };
        assert!(!locate(&cat, &trails, "widget", &opts).unwrap().truncated);
    }

    #[test]
    fn budget_drops_results_from_the_tail() {
        let long = "Ledger reconciliation notes covering every account, every region and every \
                    quarter of the fiscal year, with exceptions, owners, deadlines and the \
                    escalation path for mismatches found during the monthly close process.";
        let nodes: Vec<NodeRow> = (0..30)
            .map(|i| {
                node(
                    &format!("finance/ledgers/reconciliation-{i:02}"),
                    "note",
                    &format!("Ledger reconciliation {i}"),
                    long,
                )
            })
            .collect();
        let (_d, cat, trails) = setup(nodes);
        let opts = LocateOptions { k: 20, ..Default::default() };
        let r = locate(&cat, &trails, "ledger", &opts).unwrap();
        assert!(r.truncated);
        assert!(!r.results.is_empty() && r.results.len() < 20, "{}", r.results.len());
        let fits = |n: usize| {
            let v = serde_json::json!({
                "results": serde_json::to_value(&r.results[..n.min(r.results.len())]).unwrap(),
                "truncated": true,
            });
            pyjson::dumps(&v).chars().count().div_ceil(4)
        };
        assert!(fits(r.results.len()) <= 800);
        // One more result (same shape) would not have fit.
        let mut more = r.results.clone();
        more.push(r.results[0].clone());
        let v = serde_json::json!({"results": serde_json::to_value(&more).unwrap(), "truncated": true});
        assert!(pyjson::dumps(&v).chars().count().div_ceil(4) > 800);
    }

    #[test]
    fn empty_results_say_what_was_searched_without_echoing() {
        let (_d, cat, trails) = setup(sample_forest());
        for q in ["zanzibarquux", "", "  - ", "\"\""] {
            let r = locate(&cat, &trails, q, &LocateOptions::default()).unwrap();
            assert!(r.results.is_empty());
            assert!(!r.truncated);
            assert_eq!(r.searched, Some(cat.count_nodes().unwrap()));
            let hint = r.hint.as_deref().unwrap();
            assert!(hint.contains("sniff"));
            if !q.trim().is_empty() {
                assert!(!hint.contains(q.trim()));
            }
            let v = serde_json::to_value(&r).unwrap();
            let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["results", "truncated", "searched", "hint"]);
        }
    }
}

mod heat {
    use super::*;
    use proptest::prelude::*;

    const DAY: f64 = 86400.0;

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn deposits_cap_and_sessions_fold_at_half() {
        let (_d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        t.deposit(&ids(&["a", "b"]), 0.1, "").unwrap();
        t.deposit(&ids(&["a"]), 0.7, "").unwrap();
        assert_eq!(t.get_heat("a", None).unwrap(), 0.8);
        t.deposit(&ids(&["a"]), 0.5, "").unwrap();
        assert_eq!(t.get_heat("a", None).unwrap(), 1.0);
        t.deposit(&ids(&["c"]), 3.0, "").unwrap();
        assert_eq!(t.get_heat("c", None).unwrap(), 1.0);
        t.deposit(&ids(&["b"]), 0.3, "s1").unwrap();
        assert_eq!(t.get_heat("b", Some("s1")).unwrap(), 0.25);
        assert_eq!(t.get_heat("b", Some("s2")).unwrap(), 0.1);
        assert_eq!(t.get_heat("a", Some("s1")).unwrap(), 1.0);
        assert_eq!(t.get_heat("zz", None).unwrap(), 0.0);
        assert!(t.deposit(&ids(&["a"]), -1.0, "").is_err());
        assert_eq!(t.clear_session("s1").unwrap(), 1);
        assert_eq!(t.get_heat("b", Some("s1")).unwrap(), 0.1);
        let s = t.stats().unwrap();
        assert_eq!((s.rows, s.max, s.mean), (3, 1.0, 0.7));
    }

    #[test]
    fn heat_map_covers_more_than_one_chunk() {
        let (_d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        let all: Vec<String> = (0..1000).map(|i| format!("n{i}")).collect();
        let warm: Vec<String> = all.iter().step_by(3).cloned().collect();
        t.deposit(&warm, 0.2, "").unwrap();
        let map = t.heat_map(&all, None).unwrap();
        assert_eq!(map.len(), 1000);
        for (i, id) in all.iter().enumerate() {
            let want = if i % 3 == 0 { 0.2 } else { 0.0 };
            assert_eq!(map[id], want, "{id}");
        }
    }

    #[test]
    fn rekey_keeps_the_max() {
        let (_d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        t.deposit(&ids(&["old"]), 0.6, "").unwrap();
        t.deposit(&ids(&["new"]), 0.2, "").unwrap();
        t.deposit(&ids(&["old"]), 0.4, "s").unwrap();
        t.rekey("old", "new").unwrap();
        assert_eq!(t.get_heat("new", None).unwrap(), 0.6);
        assert_eq!(t.get_heat("old", None).unwrap(), 0.0);
        assert_eq!(t.get_heat("new", Some("s")).unwrap(), 0.8);
    }

    #[test]
    fn evaporation_follows_the_dialect() {
        let (_d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        let t0 = 1_700_000_000.0;
        t.deposit_at(&ids(&["hot"]), 0.8, "", t0).unwrap();
        t.deposit_at(&ids(&["faint"]), 0.05, "", t0).unwrap();
        t.deposit_at(&ids(&["future"]), 0.5, "", t0 + 100.0 * DAY).unwrap();
        t.deposit_at(&ids(&["x"]), 0.2, "old-hunt", t0).unwrap();
        t.deposit_at(&ids(&["x"]), 0.2, "live-hunt", t0 + 30.0 * DAY - 3600.0).unwrap();

        let now = t0 + 30.0 * DAY;
        let ev = t.evaporate(now, 30.0).unwrap();
        assert_eq!((ev.decayed, ev.removed), (2, 0));
        assert_eq!(t.get_heat("hot", None).unwrap(), 0.4);
        assert_eq!(t.get_heat("future", None).unwrap(), 0.5, "dt <= 0 is skipped");

        // Same instant: a no-op.
        let before = t.persistent_rows().unwrap();
        let again = t.evaporate(now, 30.0).unwrap();
        assert_eq!((again.decayed, again.removed), (0, 0));
        assert_eq!(t.persistent_rows().unwrap(), before);

        // Four half-lives in total: 0.05 -> 0.003125 is dust.
        let ev = t.evaporate(t0 + 120.0 * DAY, 30.0).unwrap();
        assert_eq!(ev.removed, 1);
        assert_eq!(t.get_heat("faint", None).unwrap(), 0.0);
        assert_eq!(t.get_heat("hot", None).unwrap(), 0.05);

        let cleared = t.clear_stale_sessions(now, 24.0).unwrap();
        assert_eq!(cleared, 1);
        assert_eq!(t.get_heat("x", Some("old-hunt")).unwrap(), 0.0);
        assert_eq!(t.get_heat("x", Some("live-hunt")).unwrap(), 0.1);
        assert!(t.evaporate(now, 0.0).is_err());
    }

    #[test]
    fn single_small_row_is_removed_after_four_half_lives() {
        let (_d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        t.deposit_at(&ids(&["n"]), 0.05, "", 0.0).unwrap();
        let ev = t.evaporate(4.0 * 30.0 * DAY, 30.0).unwrap();
        assert_eq!((ev.decayed, ev.removed), (0, 1));
        assert_eq!(t.stats().unwrap().rows, 0);
    }

    fn seeded(rows: &[(f64, f64)]) -> (TempDir, Trails) {
        let (d, _, tp) = fresh();
        let mut t = Trails::open(&tp).unwrap();
        for (i, (h, u)) in rows.iter().enumerate() {
            t.deposit_at(&[format!("n{i}")], *h, "", *u).unwrap();
        }
        (d, t)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        #[test]
        fn evaporation_is_idempotent_and_composes(
            rows in proptest::collection::vec((0.0f64..1.0, 0.0f64..200.0), 1..12),
            t1 in 0.0f64..200.0,
            extra in 0.0f64..200.0,
            half_life in 1.0f64..60.0,
        ) {
            let rows: Vec<(f64, f64)> = rows.into_iter().map(|(h, u)| (h, u * DAY)).collect();
            let (t1, t2) = (t1 * DAY, (t1 + extra) * DAY);

            let (_a, mut once) = seeded(&rows);
            once.evaporate(t1, half_life).unwrap();
            let (_b, mut twice) = seeded(&rows);
            twice.evaporate(t1, half_life).unwrap();
            twice.evaporate(t1, half_life).unwrap();
            prop_assert_eq!(once.persistent_rows().unwrap(), twice.persistent_rows().unwrap());

            let (_c, mut direct) = seeded(&rows);
            direct.evaporate(t2, half_life).unwrap();
            once.evaporate(t2, half_life).unwrap();
            let (x, y) = (once.persistent_rows().unwrap(), direct.persistent_rows().unwrap());
            prop_assert_eq!(x.len(), y.len());
            for (p, q) in x.iter().zip(&y) {
                prop_assert_eq!(&p.0, &q.0);
                prop_assert!((p.1 - q.1).abs() <= 1e-9 * q.1.max(1e-12), "{p:?} vs {q:?}");
                prop_assert_eq!(p.2, q.2);
            }
        }
    }
}

#[path = "catalog/topk.rs"]
mod topk;
