//! `pick` (vine spec §2.4): bodies, sections, pages, batches — 4000 tokens.

use forest_model::node::outline;
use forest_model::tokens::estimate_tokens;
use forest_model::ErrorCode;
use serde_json::Value;

use crate::answers::{Body, Page, PageKey, PickAnswer, Picks, SectionBody, SectionPart, Sections};
use crate::args::{IdArg, SectionArg};
use crate::batch::{batch_ids, batch_shrink};
use crate::budget::{clip, estimate_of};
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
    dumps(&Value::String(s.to_string())).chars().count() - 2
}

const SECTION_CUT_HINT: &str =
    "This section alone is over the budget: it was cut to fit the 4000-token budget. Pick its sub-sections by name.";

impl Vine {
    /// `pick(id | [ids], section, after)`.
    pub fn pick(&mut self, ids: &IdArg, section: Option<&SectionArg>, after: Option<&str>) -> VResult<PickAnswer> {
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
                            missing.push(id.clone())
                        }
                        Err(e) => return Err(e),
                    }
                }
                let mut out = Picks { nodes, missing, dropped: vec![], truncated: false };
                batch_shrink(
                    &mut out,
                    PICK_BUDGET,
                    |o| (&mut o.nodes, &mut o.dropped, &mut o.truncated),
                    |p| p.id().unwrap_or_default().to_string(),
                );
                Ok(PickAnswer::Many(out))
            }
        }
    }

    fn pick_one(&mut self, id: &str, section: Option<&SectionArg>, after: Option<&str>) -> VResult<PickAnswer> {
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
                // Key order of the reference: id, title, section, body, body_tokens, truncated.
                return Ok(PickAnswer::Section(SectionBody {
                    id,
                    title,
                    section: s.clone(),
                    body: content,
                    body_tokens: tokens,
                    truncated: cut,
                    cut,
                    hint: cut.then(|| SECTION_CUT_HINT.to_string()),
                }));
            }
            _ => {}
        }
        let body_tokens = estimate_tokens(&body);
        if after.is_some() || body_tokens > PICK_BUDGET {
            return self.pick_page(&id, &title, &body, after);
        }
        let whole = Body { id, title, body, body_tokens, truncated: false };
        if estimate_of(&whole) > PICK_BUDGET {
            return self.pick_page(&whole.id, &whole.title, &whole.body, None);
        }
        Ok(PickAnswer::Body(whole))
    }

    fn pick_page(&self, id: &str, title: &str, body: &str, after: Option<&str>) -> VResult<PickAnswer> {
        let bl = blocks(body);
        let total = bl.len();
        let start = match after.filter(|a| !a.is_empty()) {
            None => 0,
            Some(a) => match a.strip_prefix('b').filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())) {
                Some(d) => d.parse::<usize>().map(|n| n.saturating_add(1)).unwrap_or(usize::MAX),
                None => return Err(VineError::schema(format!("unknown cursor '{a}'"))),
            },
        };
        let mut skel = Page {
            id: id.to_string(),
            title: title.to_string(),
            total,
            body: String::new(),
            body_tokens: 0,
            returned: 0,
            truncated: false,
            tail: vec![],
        };
        if start >= total {
            return Ok(PickAnswer::Page(skel));
        }
        // The skeleton with an empty body and the longest possible cursor:
        // what is left of the budget is the room for the page's JSON text.
        skel.body_tokens = PICK_BUDGET;
        skel.returned = total;
        skel.tail = vec![PageKey::Cut, PageKey::Next(format!("b{total}"))];
        if after.is_none() {
            skel.tail.push(PageKey::Outline(outline(body)));
            skel.tail.push(PageKey::Hint(format!(
                "Body is {} tokens: this is the first page. Pass after=next for the following page, or section= for one part.",
                estimate_tokens(body)
            )));
            if estimate_of(&skel) > PICK_BUDGET / 2 {
                skel.remove(|k| matches!(k, PageKey::Outline(_)));
            }
        }
        let skel_text = serde_json::to_value(&skel).map(|v| dumps(&v)).unwrap_or_default();
        let room = (PICK_BUDGET * 4).saturating_sub(skel_text.chars().count());
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
        skel.body_tokens = estimate_tokens(&page);
        skel.body = page;
        skel.returned = end - start;
        skel.truncated = cut || more;
        if !cut {
            skel.remove(|k| matches!(k, PageKey::Cut));
        }
        if more {
            if let Some(PageKey::Next(n)) = skel.tail.iter_mut().find(|k| matches!(k, PageKey::Next(_))) {
                *n = format!("b{}", end - 1);
            }
        } else {
            skel.remove(|k| matches!(k, PageKey::Next(_)));
        }
        Ok(PickAnswer::Page(skel))
    }

    fn pick_sections(&self, id: &str, title: &str, body: &str, names: &[String]) -> VResult<PickAnswer> {
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
                None => missing.push(n.clone()),
                Some((header, content)) => {
                    let t = estimate_tokens(&content);
                    if !dropped.is_empty() || sum + t > PICK_BUDGET - 400 {
                        dropped.push(n.clone());
                    } else {
                        sum += t;
                        sections.push(SectionPart { section: n.clone(), header, body: content, body_tokens: t });
                    }
                }
            }
        }
        let hint = (!missing.is_empty()).then(|| format!("Available sections: {}", py_list(&outline(body))));
        let truncated = !dropped.is_empty();
        let mut out =
            Sections { id: id.to_string(), title: title.to_string(), sections, missing, dropped, truncated, hint };
        // Sized on the whole JSON (the reference sums bodies only): drop tail sections if needed.
        batch_shrink(
            &mut out,
            PICK_BUDGET,
            |o| (&mut o.sections, &mut o.dropped, &mut o.truncated),
            |s| s.section.clone(),
        );
        Ok(PickAnswer::Sections(out))
    }
}
