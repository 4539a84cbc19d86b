//! The MCP tool table against the checked-in listing of the reference
//! server (`monkeyllm` 0.83 `vine serve`, captured with the `mcp` SDK).

use super::*;

fn reference() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference-tools.json");
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn tool_names_order_and_argument_schemas_match_the_reference() {
    let r = reference();
    let ours = forest_vine::tools::listing();
    let names = |l: &[Value]| l.iter().map(|t| t["name"].as_str().unwrap().to_string()).collect::<Vec<_>>();
    let theirs = r["tools"].as_array().unwrap();
    assert_eq!(names(&ours), names(theirs));
    assert_eq!(ours.len(), 18);
    for (a, b) in ours.iter().zip(theirs) {
        let (sa, sb) = (&a["inputSchema"], &b["inputSchema"]);
        let keys = |s: &Value| s["properties"].as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(sa), keys(sb), "{} argument names", a["name"]);
        assert_eq!(sa["required"], sb["required"], "{} required", a["name"]);
        assert_eq!(sa["properties"], sb["properties"], "{} property schemas", a["name"]);
        assert_eq!(sa["title"], sb["title"]);
    }
}

#[test]
fn every_advertised_argument_passes_the_signature_table() {
    for t in forest_vine::tools::listing() {
        let name = t["name"].as_str().unwrap();
        if name == "forests" {
            continue;
        }
        let sig = forest_vine::signature(name).unwrap_or_else(|| panic!("{name} has no signature"));
        for p in t["inputSchema"]["properties"].as_object().unwrap().keys() {
            assert!(p == "forest" || sig.iter().any(|s| s.0 == p), "{name}.{p} not in the signature table");
        }
    }
}
