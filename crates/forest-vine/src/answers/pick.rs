//! The answers of `pick`: a body, a section, sections, a page or a batch.

use serde::Serialize;

use super::flag::is_false;
use crate::primitive::Answer;

/// `pick` of a whole body that fits.
#[derive(Debug, Serialize)]
pub struct Body {
    /// The node.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The body.
    pub body: String,
    /// Its tokens.
    pub body_tokens: usize,
    /// Always false.
    pub truncated: bool,
}

/// `pick` of one section.
#[derive(Debug, Serialize)]
pub struct SectionBody {
    /// The node.
    pub id: String,
    /// Its title.
    pub title: String,
    /// The section asked.
    pub section: String,
    /// Its text (cut to the budget when over it).
    pub body: String,
    /// Tokens of the whole section.
    pub body_tokens: usize,
    /// It was cut.
    pub truncated: bool,
    /// It was cut (named for the reader).
    #[serde(skip_serializing_if = "is_false")]
    pub cut: bool,
    /// What to do about a cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// One section of a `pick` of several.
#[derive(Debug, Serialize)]
pub struct SectionPart {
    /// The name asked.
    pub section: String,
    /// Its header line.
    pub header: String,
    /// Its text.
    pub body: String,
    /// Its tokens.
    pub body_tokens: usize,
}

/// `pick` of several sections.
#[derive(Debug, Serialize)]
pub struct Sections {
    /// The node.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Sections returned, in request order.
    pub sections: Vec<SectionPart>,
    /// Names with no section.
    pub missing: Vec<String>,
    /// Names dropped to fit the budget.
    pub dropped: Vec<String>,
    /// Some were dropped.
    pub truncated: bool,
    /// The sections the node has (when some were missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// The keys after `truncated` in a page, in the order the wire has them.
#[derive(Debug, Clone)]
pub enum PageKey {
    /// `cut: true`: one block was over the room.
    Cut,
    /// `next`: the cursor of the following page.
    Next(String),
    /// `outline`: the section headers (first page).
    Outline(Vec<String>),
    /// `hint`: how to page (first page).
    Hint(String),
}

/// `pick` of one page of a long body.
#[derive(Debug, Clone)]
pub struct Page {
    /// The node.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Blocks in the body.
    pub total: usize,
    /// The page's text.
    pub body: String,
    /// Its tokens.
    pub body_tokens: usize,
    /// Blocks returned.
    pub returned: usize,
    /// More follows, or a block was cut.
    pub truncated: bool,
    /// The keys that follow, in wire order.
    pub tail: Vec<PageKey>,
}

impl Page {
    /// Leave out the first key `is` names (the last key takes its place,
    /// as the wire's map does).
    pub fn remove(&mut self, is: impl Fn(&PageKey) -> bool) {
        if let Some(i) = self.tail.iter().position(is) {
            self.tail.swap_remove(i);
        }
    }
}

impl Serialize for Page {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        m.serialize_entry("title", &self.title)?;
        m.serialize_entry("total", &self.total)?;
        m.serialize_entry("body", &self.body)?;
        m.serialize_entry("body_tokens", &self.body_tokens)?;
        m.serialize_entry("returned", &self.returned)?;
        m.serialize_entry("truncated", &self.truncated)?;
        for k in &self.tail {
            match k {
                PageKey::Cut => m.serialize_entry("cut", &true)?,
                PageKey::Next(n) => m.serialize_entry("next", n)?,
                PageKey::Outline(o) => m.serialize_entry("outline", o)?,
                PageKey::Hint(h) => m.serialize_entry("hint", h)?,
            }
        }
        m.end()
    }
}

/// `pick` of a list of ids.
#[derive(Debug, Serialize)]
pub struct Picks {
    /// Answers, in request order.
    pub nodes: Vec<PickAnswer>,
    /// Ids with no node.
    pub missing: Vec<String>,
    /// Ids dropped to fit the budget.
    pub dropped: Vec<String>,
    /// Some were dropped.
    pub truncated: bool,
}

/// What `pick` answers.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PickAnswer {
    /// A whole body.
    Body(Body),
    /// One section.
    Section(SectionBody),
    /// Several sections.
    Sections(Sections),
    /// One page.
    Page(Page),
    /// A batch.
    Many(Picks),
}

impl PickAnswer {
    /// The node it answers for (a batch: none).
    pub fn id(&self) -> Option<&str> {
        match self {
            PickAnswer::Body(b) => Some(&b.id),
            PickAnswer::Section(s) => Some(&s.id),
            PickAnswer::Sections(s) => Some(&s.id),
            PickAnswer::Page(p) => Some(&p.id),
            PickAnswer::Many(_) => None,
        }
    }
}

impl Page {
    /// The outline the first page carries.
    pub fn outline(&self) -> Option<&Vec<String>> {
        self.tail.iter().find_map(|k| match k {
            PageKey::Outline(o) => Some(o),
            _ => None,
        })
    }
    /// The hint the first page carries.
    pub fn hint(&self) -> Option<&String> {
        self.tail.iter().find_map(|k| match k {
            PageKey::Hint(h) => Some(h),
            _ => None,
        })
    }
}

impl Answer for PickAnswer {}
