//! PDF document outline (bookmarks) as (level, title, page) entries, and PDF
//! text-string decoding.
//!
//! In: a loaded lopdf `Document`. Out: outline entries in reading order.
//! lopdf's own `get_toc` gives up on the whole outline when one entry points
//! to an unknown named destination and keys entries by title (two
//! "Introduction" chapters become one); this walker skips only the entries it
//! cannot resolve, keeps duplicates, and is guarded against cycles.

use pdf_extract::{Dictionary, Document, Object, ObjectId};
use std::collections::{HashMap, HashSet};

/// Most outline entries read; real manuals have a few thousand at most.
const MAX_ENTRIES: usize = 50_000;

/// Decode a PDF text string: UTF-16BE with BOM, else UTF-8, else
/// byte-per-char (PDFDocEncoding agrees with Latin-1 on letters).
pub(crate) fn decode_pdf_string(b: &[u8]) -> String {
    if let Some(rest) = b.strip_prefix(&[0xfe, 0xff]) {
        let units: Vec<u16> = rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect();
        String::from_utf16_lossy(&units)
    } else if let Ok(s) = std::str::from_utf8(b) {
        s.to_string()
    } else {
        b.iter().map(|&c| char::from(c)).collect()
    }
}

/// Whitespace runs collapsed to single spaces, control characters dropped.
pub(crate) fn clean_title(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c.is_control()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

struct Walker<'a> {
    doc: &'a Document,
    pages: HashMap<ObjectId, u32>,
    named: Option<HashMap<Vec<u8>, Object>>,
}

impl<'a> Walker<'a> {
    fn deref(&self, o: &'a Object) -> Option<&'a Object> {
        self.doc.dereference(o).ok().map(|(_, o)| o)
    }

    fn dict(&self, d: &'a Dictionary, key: &[u8]) -> Option<&'a Dictionary> {
        self.deref(d.get(key).ok()?)?.as_dict().ok()
    }

    /// Named destinations of the catalog's `/Dests` dictionary and the
    /// `/Names /Dests` name tree, read once on first use.
    fn named(&mut self) -> &HashMap<Vec<u8>, Object> {
        if self.named.is_none() {
            let mut map = HashMap::new();
            if let Ok(cat) = self.doc.catalog() {
                if let Some(dests) = self.dict(cat, b"Dests") {
                    for (k, v) in dests.iter() {
                        map.insert(k.clone(), v.clone());
                    }
                }
                if let Some(tree) = self.dict(cat, b"Names").and_then(|n| self.dict(n, b"Dests")) {
                    self.name_tree(tree, &mut map);
                }
            }
            self.named = Some(map);
        }
        self.named.get_or_insert_with(HashMap::new)
    }

    fn name_tree(&self, root: &'a Dictionary, map: &mut HashMap<Vec<u8>, Object>) {
        let mut stack = vec![root];
        let mut seen = 0usize;
        while let Some(node) = stack.pop() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return;
            }
            if let Some(names) = node.get(b"Names").ok().and_then(|o| self.deref(o)).and_then(|o| o.as_array().ok()) {
                for pair in names.chunks_exact(2) {
                    if let Ok(key) = pair[0].as_str() {
                        map.insert(key.to_vec(), pair[1].clone());
                    }
                }
            }
            if let Some(kids) = node.get(b"Kids").ok().and_then(|o| self.deref(o)).and_then(|o| o.as_array().ok()) {
                stack.extend(kids.iter().filter_map(|k| self.deref(k)?.as_dict().ok()));
            }
        }
    }

    /// Page number a destination points to: an explicit `[page ...]` array,
    /// a name, or a dictionary holding either under `/D`.
    fn page_of(&mut self, dest: &Object, depth: u8) -> Option<u32> {
        if depth > 4 {
            return None;
        }
        let dest = self.doc.dereference(dest).ok()?.1.clone();
        match &dest {
            Object::Array(a) => match a.first()? {
                Object::Reference(id) => self.pages.get(id).copied(),
                // Remote-style 0-based page index.
                Object::Integer(i) => u32::try_from(*i).ok().map(|i| i + 1),
                _ => None,
            },
            Object::String(name, _) | Object::Name(name) => {
                let target = self.named().get(name.as_slice())?.clone();
                self.page_of(&target, depth + 1)
            }
            Object::Dictionary(d) => {
                let d = d.get(b"D").ok()?.clone();
                self.page_of(&d, depth + 1)
            }
            _ => None,
        }
    }

    /// `/Dest`, else a `/GoTo` action's `/D`.
    fn target(&mut self, node: &'a Dictionary) -> Option<u32> {
        if let Ok(d) = node.get(b"Dest") {
            let d = d.clone();
            return self.page_of(&d, 0);
        }
        let action = self.dict(node, b"A")?;
        if action.get(b"S").ok()?.as_name().ok()? != b"GoTo" {
            return None;
        }
        let d = action.get(b"D").ok()?.clone();
        self.page_of(&d, 0)
    }
}

/// Outline entries as (level from 1, title, page); empty when there is none.
pub(crate) fn outline(doc: &Document) -> Vec<(usize, String, u32)> {
    let pages = doc.get_pages().into_iter().map(|(n, id)| (id, n)).collect();
    let mut w = Walker { doc, pages, named: None };
    let Ok(cat) = doc.catalog() else { return Vec::new() };
    let Some(root) = w.dict(cat, b"Outlines") else { return Vec::new() };
    let mut out = Vec::new();
    let mut seen: HashSet<ObjectId> = HashSet::new();
    // Depth-first, pre-order: (node reference, level).
    let mut stack: Vec<(&Object, usize)> = root.get(b"First").map(|f| vec![(f, 1)]).unwrap_or_default();
    while let Some((obj, level)) = stack.pop() {
        if seen.len() >= MAX_ENTRIES {
            break;
        }
        if let Object::Reference(id) = obj {
            if !seen.insert(*id) {
                continue;
            }
        }
        let Some(node) = w.deref(obj).and_then(|o| o.as_dict().ok()) else { continue };
        if let Ok(next) = node.get(b"Next") {
            stack.push((next, level));
        }
        if let Ok(first) = node.get(b"First") {
            stack.push((first, level + 1));
        }
        let title = node
            .get(b"Title")
            .ok()
            .and_then(|t| w.deref(t))
            .and_then(|t| t.as_str().ok())
            .map(|t| clean_title(&decode_pdf_string(t)))
            .unwrap_or_default();
        if title.is_empty() {
            continue;
        }
        if let Some(page) = w.target(node) {
            out.push((level, title, page));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pdf_extract::{dictionary, Stream};

    /// A three-page document whose outline has a chapter with a child, a
    /// duplicate title, a named destination, an unknown name and a cycle.
    fn doc_with_outline() -> Document {
        let mut doc = Document::with_version("1.5");
        let pages_id = doc.new_object_id();
        let content = doc.add_object(Stream::new(dictionary! {}, Vec::new()));
        let page_ids: Vec<ObjectId> = (0..3)
            .map(|_| {
                doc.add_object(dictionary! {
                    "Type" => "Page", "Parent" => pages_id, "Contents" => content,
                    "MediaBox" => vec![0.into(), 0.into(), 612.into(), 792.into()],
                })
            })
            .collect();
        let kids: Vec<Object> = page_ids.iter().map(|id| Object::Reference(*id)).collect();
        doc.objects
            .insert(pages_id, Object::Dictionary(dictionary! { "Type" => "Pages", "Kids" => kids, "Count" => 3 }));
        let outlines_id = doc.new_object_id();
        let [a, b, c, d, e] = [(); 5].map(|_| doc.new_object_id());
        let s = |t: &str| Object::string_literal(t);
        doc.objects.insert(
            a,
            Object::Dictionary(dictionary! {
                "Title" => s("Intro"), "Dest" => vec![page_ids[0].into(), "Fit".into()], "Next" => c, "First" => b,
            }),
        );
        doc.objects.insert(
            b,
            Object::Dictionary(dictionary! {
                "Title" => s("Intro"), "A" => dictionary! { "S" => "GoTo", "D" => s("second") },
            }),
        );
        doc.objects.insert(
            c,
            Object::Dictionary(dictionary! {
                "Title" => s("Lost"), "Dest" => s("nowhere"), "Next" => d,
            }),
        );
        doc.objects.insert(d, Object::Dictionary(dictionary! {
            "Title" => Object::String(vec![0xfe, 0xff, 0, b'E', 0, b'n', 0, b'd'], pdf_extract::StringFormat::Hexadecimal),
            "Dest" => vec![page_ids[2].into(), "Fit".into()], "Next" => e,
        }));
        // Cycle back to the first entry.
        doc.objects.insert(e, Object::Dictionary(dictionary! { "Title" => s("   "), "Next" => a }));
        doc.objects.insert(outlines_id, Object::Dictionary(dictionary! { "Type" => "Outlines", "First" => a }));
        let names = dictionary! { "Dests" => dictionary! {
            "Names" => vec![s("second"), vec![page_ids[1].into(), "Fit".into()].into()],
        } };
        let catalog = doc.add_object(dictionary! {
            "Type" => "Catalog", "Pages" => pages_id, "Outlines" => outlines_id, "Names" => names,
        });
        doc.trailer.set("Root", catalog);
        doc
    }

    #[test]
    fn walks_named_duplicate_and_broken_entries() {
        let got = outline(&doc_with_outline());
        assert_eq!(got, vec![(1, "Intro".to_string(), 1), (2, "Intro".to_string(), 2), (1, "End".to_string(), 3)]);
    }

    #[test]
    fn no_outline_is_empty() {
        let mut doc = doc_with_outline();
        let root = doc.trailer.get(b"Root").unwrap().as_reference().unwrap();
        doc.get_object_mut(root).unwrap().as_dict_mut().unwrap().remove(b"Outlines");
        assert!(outline(&doc).is_empty());
    }

    #[test]
    fn decodes_pdf_strings() {
        assert_eq!(decode_pdf_string(&[0xfe, 0xff, 0, b'H', 0, b'i']), "Hi");
        assert_eq!(decode_pdf_string(b"Plain"), "Plain");
        assert_eq!(decode_pdf_string(&[b'C', 0xe9]), "Cé");
        assert_eq!(clean_title(" a\n\tb\u{1}c "), "a b c");
    }
}
