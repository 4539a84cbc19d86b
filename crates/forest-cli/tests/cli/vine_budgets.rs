//! The Vine over forests the Gardener wrote (the Vine's own tests use
//! fixture forests only: the read side does not depend on the ingest side).

use super::*;
#[path = "../../../forest-vine/tests/forest_vine/sweep.rs"]
mod sweep;

/// The Vine's budget sweep over a forest the Gardener adopted from the
/// dump-ingest fixture (here, since the Vine does not depend on the Gardener).
#[test]
fn every_node_of_an_adopted_dump_within_budget() {
    let d = tempfile::tempdir().unwrap();
    let root = d.path().join("adopted");
    let git = forest_derived::init::init_forest(&root, "Toucan").unwrap();
    let spec = forest_gardener::AdoptSpec {
        source: fixtures().join("dump-ingest").display().to_string(),
        name: None,
        dest: None,
        content: None,
        archive: None,
        endpoint_url: None,
        path_style: None,
        rclone_config: None,
        follow_symlinks: false,
        ..Default::default()
    };
    let opts = forest_gardener::RunOptions::default();
    let rep = forest_gardener::adopt(&root, &git, &spec, &opts, &forest_gardener::NoProgress, None).unwrap();
    assert!(!rep.partial(), "adopt: {:?}", rep.sources.iter().map(|s| &s.errors).collect::<Vec<_>>());
    drop(git);
    let mut v = forest_vine::Vine::open(&root, forest_vine::VineOptions { writable: false, session: None }).unwrap();
    let ids: Vec<String> = v.catalog().dump().unwrap().nodes.into_iter().map(|n| n.id.into_string()).collect();
    assert!(ids.len() > 100, "{} nodes", ids.len());
    sweep::every_read(&mut v, &ids);
    for row in v.catalog().dump().unwrap().nodes.into_iter().filter(|n| n.node_type == "dataset") {
        let a = serde_json::json!({"id": row.id, "sql": "SELECT * FROM sqlite_master"});
        let out = v.call("query", a.as_object().unwrap()).unwrap();
        sweep::check("query", &out);
    }
}
