//! `pick` (vine spec §2.4): bodies, sections, pages, batches — 4000 tokens.

use forest_model::node::outline;
use forest_model::tokens::estimate_tokens;
use forest_model::ErrorCode;
use serde_json::{json, Map, Value};

use crate::args::{IdArg, SectionArg};
use crate::batch::{batch_ids, batch_shrink};
use crate::budget::clip;
use crate::engine::{norm_id, py_list, Vine};
use crate::error::{VResult, VineError};
use crate::section::{blocks, extract_section};
use forest_catalog::pyjson::dumps;

/// Budget of any pick answer.
pub const PICK_BUDGET: usize = 4000;
/// Ids per pick batch.
pub const PICK_BATCH_CAP: usize = 5;
/// Sections per pick call.
pub const SECTION_CAP: usize = 10;

/// Characters of a string's JSON text (escapes counted, quotes not).
fn escaped_len(s: &str) -> usize {
    dumps(&json!(s)).chars().count() - 2
}

impl Vine {
    /// `pick(id | [ids], section, after)`.
    pub fn pick(&mut self, ids: &IdArg, section: Option<&SectionArg>, after: Option<&str>) -> VResult<Value> {
        match ids {
            IdArg::One(id) => self.pick_one(id, section, after),
            IdArg::Many(list) => {
                if after.is_some() {
                    return Err(VineError::schema("after pages one document; pass a single id"));
                }
                let list = batch_ids("pick", list, PICK_BATCH_CAP)?;
                let mut nodes = vec![];
                let mut missing = vec![];
                for id in &list {
                    match self.pick_one(id, section, None) {
                        Ok(v) => nodes.push(v),
                        Err(e) if e.code == ErrorCode::NotFound && !e.message.starts_with("section") => {
                            missing.push(json!(id))
                        }
                        Err(e) => return Err(e),
                    }
                }
                let mut out = Map::new();
                out.insert("nodes".into(), Value::Array(nodes));
                out.insert("missing".into(), Value::Array(missing));
                out.insert("dropped".into(), json!([]));
                out.insert("truncated".into(), json!(false));
                batch_shrink(&mut out, PICK_BUDGET);
                Ok(Value::Object(out))
            }
        }
    }

    fn pick_one(&mut self, id: &str, section: Option<&SectionArg>, after: Option<&str>) -> VResult<Value> {
        let id = norm_id(id);
        let node = self.read_node(&id)?;
        let body = self.resolve_body(&id, &node)?;
        let title = node.title().unwrap_or_else(|| id.clone());
        if section.is_some() && after.is_some() {
            return Err(VineError::schema("after and section cannot be combined"));
        }
        match section {
            Some(SectionArg::Many(names)) => return self.pick_sections(&id, &title, &body, names),
            Some(SectionArg::One(s)) if !s.is_empty() => {
                let (_, content) = extract_section(&body, s).ok_or_else(|| {
                    VineError::not_found(format!("section '{s}' not found in {id}"))
                        .hint(format!("Available sections: {}", py_list(&outline(&body))))
                })?;
                // Unlike the reference, a single section is budget-checked too.
                let tokens = estimate_tokens(&content);
                let room = PICK_BUDGET * 4 - 600 - escaped_len(&id) - escaped_len(&title) - escaped_len(s);
                let (content, cut) = if escaped_len(&content) > room {
                    let mut keep = room;
                    let mut c = clip(&content, keep / 4);
                    while escaped_len(&c) > room && keep > 8 {
                        keep = keep * 9 / 10;
                        c = clip(&content, keep / 4);
                    }
                    (c, true)
                } else {
                    (content, false)
                };
                let mut out = Map::new();
                out.insert("id".into(), json!(id));
                out.insert("title".into(), json!(title));
                out.insert("section".into(), json!(s));
                out.insert("body_tokens".into(), json!(tokens));
                out.insert("body".into(), json!(content));
                out.insert("truncated".into(), json!(cut));
                if cut {
                    out.insert("cut".into(), json!(true));
                    out.insert("hint".into(), json!("This section alone is over the budget: it was cut to fit the 4000-token budget. Pick its sub-sections by name."));
                }
                // Key order of the reference: id, title, section, body, body_tokens, truncated.
                let mut ordered = Map::new();
                for k in ["id", "title", "section", "body", "body_tokens", "truncated", "cut", "hint"] {
                    if let Some(v) = out.remove(k) {
                        ordered.insert(k.into(), v);
                    }
                }
                return Ok(Value::Object(ordered));
            }
            _ => {}
        }
        let body_tokens = estimate_tokens(&body);
        if after.is_some() || body_tokens > PICK_BUDGET {
            return self.pick_page(&id, &title, &body, after);
        }
        let whole = json!({"id": id, "title": title, "body": body, "body_tokens": body_tokens, "truncated": false});
        if crate::budget::estimate(&whole) > PICK_BUDGET {
            return self.pick_page(&id, &title, &body, None);
        }
        Ok(whole)
    }

    fn pick_page(&self, id: &str, title: &str, body: &str, after: Option<&str>) -> VResult<Value> {
        let bl = blocks(body);
        let total = bl.len();
        let start = match after.filter(|a| !a.is_empty()) {
            None => 0,
            Some(a) => match a.strip_prefix('b').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                Some(d) => d.parse::<usize>().map(|n| n.saturating_add(1)).unwrap_or(usize::MAX),
                None => return Err(VineError::schema(format!("unknown cursor '{a}'"))),
            },
        };
        if start >= total {
            return Ok(
                json!({"id": id, "title": title, "total": total, "body": "", "body_tokens": 0, "returned": 0, "truncated": false}),
            );
        }
        // The skeleton with an empty body and the longest possible cursor:
        // what is left of the budget is the room for the page's JSON text.
        let mut skel = Map::new();
        for (k, v) in [
            ("id", json!(id)),
            ("title", json!(title)),
            ("total", json!(total)),
            ("body", json!("")),
            ("body_tokens", json!(PICK_BUDGET)),
            ("returned", json!(total)),
            ("truncated", json!(false)),
            ("cut", json!(true)),
            ("next", json!(format!("b{total}"))),
        ] {
            skel.insert(k.into(), v);
        }
        if after.is_none() {
            skel.insert("outline".into(), json!(outline(body)));
            skel.insert(
                "hint".into(),
                json!(format!(
                    "Body is {} tokens: this is the first page. Pass after=next for the following page, or section= for one part.",
                    estimate_tokens(body)
                )),
            );
            if crate::budget::estimate_map(&skel) > PICK_BUDGET / 2 {
                skel.remove("outline");
            }
        }
        let room = (PICK_BUDGET * 4).saturating_sub(dumps(&Value::Object(skel.clone())).chars().count());
        let mut end = start + 1;
        let mut used = escaped_len(bl[start]);
        while end < total && used + escaped_len(bl[end]) <= room {
            used += escaped_len(bl[end]);
            end += 1;
        }
        let mut page: String = bl[start..end].concat();
        let cut = used > room;
        if cut {
            // A single block over the room: hard cut, shrinking until it fits.
            let mut keep = room / 2;
            loop {
                page = clip(bl[start], keep / 4);
                if escaped_len(&page) <= room || keep < 8 {
                    break;
                }
                keep = keep * 9 / 10;
            }
        }
        let more = end < total;
        skel.insert("body".into(), json!(page));
        skel.insert("body_tokens".into(), json!(estimate_tokens(&page)));
        skel.insert("returned".into(), json!(end - start));
        skel.insert("truncated".into(), json!(cut || more));
        if !cut {
            skel.remove("cut");
        }
        if more {
            skel.insert("next".into(), json!(format!("b{}", end - 1)));
        } else {
            skel.remove("next");
        }
        Ok(Value::Object(skel))
    }

    fn pick_sections(&self, id: &str, title: &str, body: &str, names: &[String]) -> VResult<Value> {
        if names.is_empty() {
            return Err(VineError::schema("section list must not be empty"));
        }
        if names.len() > SECTION_CAP {
            return Err(VineError::schema(format!("pick accepts at most {SECTION_CAP} sections, got {}", names.len())));
        }
        let mut sections = vec![];
        let mut missing = vec![];
        let mut dropped = vec![];
        let mut sum = 0usize;
        for n in names {
            match extract_section(body, n) {
                None => missing.push(json!(n)),
                Some((header, content)) => {
                    let t = estimate_tokens(&content);
                    if !dropped.is_empty() || sum + t > PICK_BUDGET - 400 {
                        dropped.push(json!(n));
                    } else {
                        sum += t;
                        sections.push(json!({"section": n, "header": header, "body": content, "body_tokens": t}));
                    }
                }
            }
        }
        let mut out = Map::new();
        out.insert("id".into(), json!(id));
        out.insert("title".into(), json!(title));
        out.insert("sections".into(), Value::Array(sections));
        out.insert("missing".into(), json!(missing));
        out.insert("truncated".into(), json!(!dropped.is_empty()));
        out.insert("dropped".into(), json!(dropped));
        if !missing.is_empty() {
            out.insert("hint".into(), json!(format!("Available sections: {}", py_list(&outline(body)))));
        }
        let mut ordered = Map::new();
        for k in ["id", "title", "sections", "missing", "dropped", "truncated", "hint"] {
            if let Some(v) = out.remove(k) {
                ordered.insert(k.into(), v);
            }
        }
        // Sized on the whole JSON (the reference sums bodies only): drop tail sections if needed.
        while crate::budget::estimate_map(&ordered) > PICK_BUDGET {
            let Some(s) = ordered.get_mut("sections").and_then(Value::as_array_mut).and_then(|a| a.pop()) else {
                break;
            };
            if let Some(d) = ordered.get_mut("dropped").and_then(Value::as_array_mut) {
                d.insert(0, s["section"].clone());
            }
            ordered.insert("truncated".into(), json!(true));
        }
        Ok(Value::Object(ordered))
    }
}
