//! What each page shows, gathered through the Vine's primitives with the
//! caller's [`Access`]: the same checks as an MCP call (a read token,
//! out-of-scope ids answer not found), the same `locate` (so the same ids
//! in the same order), the same scoped views. The console calls read
//! primitives only.
//!
//! In: an access and a route's parameters. Out: template contexts (JSON).
//! Touches: the engines' pool (reads; a read token deposits no heat).

use forest_vine::access::Access;
use forest_vine::mcp::VineServer;
use serde_json::{json, Map, Value};

use crate::error::ConsoleError;
use crate::route::node_href;

/// Results of a console search.
pub const SEARCH_K: i64 = 20;

/// Children listed per browse page.
pub const BROWSE_PAGE: i64 = 100;

/// One primitive with `access`'s rights, checked first as MCP checks it.
pub async fn call(server: &VineServer, access: &Access, prim: &str, args: Value) -> Result<Value, ConsoleError> {
    let args: Map<String, Value> = match args {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    access.check(prim, &args).map_err(|r| ConsoleError::Vine(r.error))?;
    Ok(server.call(prim, args, access).await?)
}

/// The ancestors of `id` (its branches' `_index` nodes) that `access` sees.
pub fn trail_of(access: &Access, id: &str) -> Vec<Value> {
    let mut out = vec![];
    let parts: Vec<&str> = id.split('/').collect();
    let mut prefix = String::new();
    let mut ids = vec!["_index".to_string()];
    for p in &parts[..parts.len().saturating_sub(1)] {
        prefix.push_str(p);
        prefix.push('/');
        ids.push(format!("{prefix}_index"));
    }
    for a in ids {
        if a != id && access.visible(&a) {
            out.push(json!({"id": a, "href": node_href("node", &a)}));
        }
    }
    out
}

fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// The search page's results (`locate` with k = [`SEARCH_K`]).
pub async fn search(server: &VineServer, access: &Access, q: &str) -> Result<Vec<Value>, ConsoleError> {
    if q.is_empty() {
        return Ok(vec![]);
    }
    let v = call(server, access, "locate", json!({"query": q, "k": SEARCH_K})).await?;
    let hits = v.get("results").and_then(Value::as_array).cloned().unwrap_or_default();
    Ok(hits
        .iter()
        .filter(|h| access.visible(&s(h, "id")))
        .map(|h| {
            let id = s(h, "id");
            let title = match s(h, "title") {
                t if t.is_empty() => id.clone(),
                t => t,
            };
            json!({
                "id": id, "href": node_href("node", &id), "title": title, "summary": s(h, "summary"),
                "type": s(h, "type"), "score": h.get("score"), "heat": h.get("heat"),
                "trail": trail_of(access, &id),
            })
        })
        .collect())
}

/// The node page: scent (`look`), body (`pick`), links, heat, trail.
pub async fn node(server: &VineServer, access: &Access, id: &str) -> Result<Value, ConsoleError> {
    if !access.visible(id) {
        return Err(ConsoleError::Vine(forest_vine::VineError::not_found(format!("node not found: {id}"))));
    }
    let look = call(server, access, "look", json!({"id": id})).await?;
    let id = s(&look, "id");
    let pick = call(server, access, "pick", json!({"id": id})).await?;
    let edge = |e: &Value, k: &str| {
        let to = s(e, k);
        json!({"rel": s(e, "rel"), "id": to, "href": node_href("node", &to)})
    };
    let list = |k: &str, end: &str| -> Vec<Value> {
        look.get(k)
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|e| edge(e, end)).filter(|e| access.visible(&s(e, "id"))).collect())
            .unwrap_or_default()
    };
    let branch = s(&look, "type") == "branch" || id.ends_with("_index");
    Ok(json!({
        "node": look,
        "heat": look.pointer("/stats/heat").cloned().unwrap_or(json!(0.0)),
        "links_out": list("edges_out", "target"),
        "links_in": list("edges_in", "source"),
        "body": s(&pick, "body"),
        "body_truncated": pick.get("truncated") == Some(&json!(true)),
        "history_href": node_href("history", &id),
        "trail_items": trail_of(access, &id),
        "browse_href": if branch { Some(node_href("browse", &id)) } else { None },
    }))
}

/// The history page: the `history` primitive (git log of the node's file).
pub async fn history(server: &VineServer, access: &Access, id: &str) -> Result<Value, ConsoleError> {
    if !access.visible(id) {
        return Err(ConsoleError::Vine(forest_vine::VineError::not_found(format!("node not found: {id}"))));
    }
    let look = call(server, access, "look", json!({"id": id, "fields": ["id", "title", "type"]})).await?;
    let id = s(&look, "id");
    let hist = call(server, access, "history", json!({"id": id, "limit": 50})).await?;
    Ok(json!({
        "node": look, "node_href": node_href("node", &id), "trail_items": trail_of(access, &id),
        "history": hist.get("entries").cloned().unwrap_or(json!([])),
        "truncated": hist.get("truncated") == Some(&json!(true)),
    }))
}

/// The browse page: the token's roots, or one branch's children (paged).
pub async fn browse(
    server: &VineServer,
    access: &Access,
    id: Option<&str>,
    after: Option<&str>,
) -> Result<Value, ConsoleError> {
    let Some(id) = id else {
        // The master for an unscoped token; its branches for a scoped one.
        let roots: Vec<Value> = if access.scoped() {
            access
                .branches
                .iter()
                .map(|b| {
                    let i = format!("{b}_index");
                    json!({"id": i, "href": node_href("browse", &i), "type": "branch", "summary": "", "body_tokens": ""})
                })
                .collect()
        } else {
            return Box::pin(browse(server, access, Some("_index"), after)).await;
        };
        return Ok(json!({"node": null, "children": roots, "total": roots.len(), "next": null, "after": null}));
    };
    if !access.visible(id) {
        return Err(ConsoleError::Vine(forest_vine::VineError::not_found(format!("node not found: {id}"))));
    }
    let look = call(server, access, "look", json!({"id": id, "fields": ["id", "title", "summary", "type"]})).await?;
    let mut args = json!({"parent_id": id, "limit": BROWSE_PAGE});
    if let Some(a) = after {
        args["after"] = json!(a);
    }
    let scan = call(server, access, "scan", args).await?;
    let nodes = scan.get("nodes").and_then(Value::as_array).cloned().unwrap_or_default();
    let children: Vec<Value> = nodes
        .iter()
        .filter(|c| access.visible(&s(c, "id")))
        .map(|c| {
            let cid = s(c, "id");
            let kind = if s(c, "type") == "branch" { "browse" } else { "node" };
            json!({"id": cid, "href": node_href(kind, &cid), "type": s(c, "type"), "summary": s(c, "summary"),
                   "body_tokens": c.get("body_tokens")})
        })
        .collect();
    let next = (scan.get("truncated") == Some(&json!(true)))
        .then(|| children.last().map(|c| format!("{}?after={}", node_href("browse", id), enc(&s(c, "id")))))
        .flatten();
    let mut node = look.clone();
    node["href"] = json!(node_href("node", id));
    node["trail"] = json!(trail_of(access, id));
    Ok(json!({"node": node, "children": children, "total": scan.get("total"), "next": next, "after": after}))
}

fn enc(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trails_show_only_visible_ancestors() {
        let owner = Access::owner();
        let t: Vec<String> = trail_of(&owner, "a/b/c").iter().map(|v| s(v, "id")).collect();
        assert_eq!(t, vec!["_index", "a/_index", "a/b/_index"]);
        let t: Vec<String> = trail_of(&owner, "a/b/_index").iter().map(|v| s(v, "id")).collect();
        assert_eq!(t, vec!["_index", "a/_index"]);
        let eng = Access::new("eng", false, &["a/b".into()]);
        let t: Vec<String> = trail_of(&eng, "a/b/c").iter().map(|v| s(v, "id")).collect();
        assert_eq!(t, vec!["a/b/_index"], "the master and a/ are not this token's");
    }
}
