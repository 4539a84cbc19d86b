//! The typed shapes inside write and filter arguments: a node `plant`
//! creates ([`NodeSpec`]), a `graft` patch ([`GraftPatch`]) and a `scan`
//! filter ([`ScanFilter`]).
//!
//! Decoding is lenient where the primitive gives the clearer refusal: a
//! scent field that is not a string reads as absent (plant then names the
//! missing field), a patch part of the wrong JSON type reads as
//! [`Shaped::Wrong`] (graft refuses it with its own message, in its own
//! order: writer lock, node, then patch). JSON values remain only where
//! the frontmatter takes any YAML value: the extra keys of a node (the
//! dialect allows keys beyond the scent: links, tags, payload, ...), the
//! values `set_frontmatter` writes (null removes) and the extra keys of a
//! link.
//!
//! In: nothing. Out: types. Touches nothing.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// A string field: any other JSON value reads as absent.
fn text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        Value::String(s) => Some(s),
        _ => None,
    })
}

/// The string at `k` of a JSON object (`None` for any other value).
fn text_at(m: &IndexMap<String, Value>, k: &str) -> Option<String> {
    m.get(k).and_then(Value::as_str).map(String::from)
}

/// A node `plant` creates: the scent and placement fields by name, every
/// other key as frontmatter in the order given.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct NodeSpec {
    /// Its id.
    #[serde(default, deserialize_with = "text")]
    pub id: Option<String>,
    /// Its type (one of the dialect's).
    #[serde(rename = "type", default, deserialize_with = "text")]
    pub node_type: Option<String>,
    /// Its title.
    #[serde(default, deserialize_with = "text")]
    pub title: Option<String>,
    /// Its summary (60 tokens at most).
    #[serde(default, deserialize_with = "text")]
    pub summary: Option<String>,
    /// The branch index it hangs under.
    #[serde(default, deserialize_with = "text")]
    pub parent: Option<String>,
    /// Its body (default: a heading and the summary).
    #[serde(default, deserialize_with = "text")]
    pub body: Option<String>,
    /// Who wrote it (default `agent`).
    #[serde(default, deserialize_with = "text")]
    pub source: Option<String>,
    /// Every other key, written as frontmatter in the order given (nulls
    /// dropped; `created`/`updated` are the engine's).
    #[serde(flatten)]
    pub extra: IndexMap<String, Value>,
}

/// A patch part as sent: the expected shape, or any other JSON value.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Shaped<T> {
    /// The expected shape.
    Ok(T),
    /// Something else (null included): refused by the primitive.
    Wrong(Value),
}

/// A present patch part (null included) as [`Shaped`].
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<Shaped<T>>, D::Error> {
    Shaped::deserialize(d).map(Some)
}

/// A present section part; a value that is not an object reads as an
/// empty header and content.
fn section<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SectionPatch>, D::Error> {
    let m = match Value::deserialize(d)? {
        Value::Object(m) => m.into_iter().collect(),
        _ => IndexMap::new(),
    };
    Ok(Some(SectionPatch {
        header: text_at(&m, "header").unwrap_or_default(),
        content: text_at(&m, "content").unwrap_or_default(),
    }))
}

/// A `graft` patch: each part by name, unknown keys kept to be refused.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub struct GraftPatch {
    /// Mutable frontmatter fields to set (null removes).
    #[serde(default, deserialize_with = "present")]
    pub set_frontmatter: Option<Shaped<FrontmatterSet>>,
    /// Links to add (a known one gains heat instead).
    #[serde(default, deserialize_with = "present")]
    pub add_links: Option<Shaped<Vec<LinkSpec>>>,
    /// Links to remove (anything but a list is ignored).
    #[serde(default, deserialize_with = "present")]
    pub remove_links: Option<Shaped<Vec<LinkSpec>>>,
    /// A section appended to the body.
    #[serde(default, deserialize_with = "section")]
    pub append_section: Option<SectionPatch>,
    /// A section whose content is replaced.
    #[serde(default, deserialize_with = "section")]
    pub replace_section: Option<SectionPatch>,
    /// The whole body.
    #[serde(default, deserialize_with = "present")]
    pub replace_body: Option<Shaped<String>>,
    /// Keys a patch does not take (refused, the first one named).
    #[serde(flatten)]
    pub unknown: IndexMap<String, Value>,
}

impl GraftPatch {
    /// True when the patch names no part at all.
    pub fn is_empty(&self) -> bool {
        self.set_frontmatter.is_none()
            && self.add_links.is_none()
            && self.remove_links.is_none()
            && self.append_section.is_none()
            && self.replace_section.is_none()
            && self.replace_body.is_none()
            && self.unknown.is_empty()
    }
}

/// A frontmatter field `set_frontmatter` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldName {
    /// `title`
    Title,
    /// `summary`
    Summary,
    /// `tags`
    Tags,
    /// `confidence`
    Confidence,
    /// `aliases`
    Aliases,
    /// `origin`
    Origin,
    /// Any other key (graft refuses it: immutable).
    Immutable(String),
}

impl FieldName {
    /// The fields a graft may set, in the order its hint lists them.
    pub const MUTABLE: [FieldName; 6] = [
        FieldName::Title,
        FieldName::Summary,
        FieldName::Tags,
        FieldName::Confidence,
        FieldName::Aliases,
        FieldName::Origin,
    ];

    fn of(k: &str) -> FieldName {
        Self::MUTABLE.into_iter().find(|f| f.as_str() == k).unwrap_or_else(|| FieldName::Immutable(k.to_string()))
    }

    /// The frontmatter key.
    pub fn as_str(&self) -> &str {
        match self {
            FieldName::Title => "title",
            FieldName::Summary => "summary",
            FieldName::Tags => "tags",
            FieldName::Confidence => "confidence",
            FieldName::Aliases => "aliases",
            FieldName::Origin => "origin",
            FieldName::Immutable(k) => k,
        }
    }
}

/// `set_frontmatter`: the fields in the order given, each with the value
/// it takes (null removes the field).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrontmatterSet(pub Vec<(FieldName, Value)>);

impl<'de> Deserialize<'de> for FrontmatterSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = IndexMap::<String, Value>::deserialize(d)?;
        Ok(FrontmatterSet(m.into_iter().map(|(k, v)| (FieldName::of(&k), v)).collect()))
    }
}

impl FrontmatterSet {
    /// The value given to `f`, if named.
    pub fn get(&self, f: &FieldName) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == f).map(|(_, v)| v)
    }
}

/// One link of `add_links`/`remove_links`; a value that is not an object
/// reads as a link without rel or target.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkSpec {
    /// The relation (one of the dialect's).
    pub rel: Option<String>,
    /// The node it points at.
    pub target: Option<String>,
    /// Other keys of the link (`confidence`, `note`, ...), in order.
    pub extra: IndexMap<String, Value>,
}

impl<'de> Deserialize<'de> for LinkSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let Value::Object(m) = Value::deserialize(d)? else { return Ok(LinkSpec::default()) };
        let mut m: IndexMap<String, Value> = m.into_iter().collect();
        let (rel, target) = (text_at(&m, "rel"), text_at(&m, "target"));
        m.shift_remove("rel");
        m.shift_remove("target");
        Ok(LinkSpec { rel, target, extra: m })
    }
}

/// `append_section`/`replace_section`: a header and its content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SectionPatch {
    /// The header (`#` marks optional).
    pub header: String,
    /// The content under it.
    pub content: String,
}

/// One condition of a `scan` filter.
#[derive(Debug, Clone, PartialEq)]
pub enum FilterTerm {
    /// `tags_any`: at least one of these tags.
    TagsAny(Vec<String>),
    /// `updated_after`: updated on or after.
    UpdatedAfter(String),
    /// `created_after`: created on or after.
    CreatedAfter(String),
    /// `updated_before`: updated on or before.
    UpdatedBefore(String),
    /// `created_before`: created on or before.
    CreatedBefore(String),
    /// `min_confidence` (a value that is not a number matches nothing).
    MinConfidence(Option<f64>),
    /// `origin_prefix`: the origin starts with it.
    OriginPrefix(String),
    /// `kind`: banana | branch | ...
    Kind(String),
    /// `lang`: the declared language, exact.
    Lang(String),
    /// Any other key: a catalog column by equality (an unknown column is
    /// refused when the filter runs).
    Column(String, String),
}

/// A `scan` filter: its conditions in the order given, all of which must hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScanFilter(pub Vec<FilterTerm>);

impl<'de> Deserialize<'de> for ScanFilter {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let m = IndexMap::<String, Value>::deserialize(d)?;
        Ok(ScanFilter(m.into_iter().map(|(k, v)| FilterTerm::of(k, &v)).collect()))
    }
}

impl FilterTerm {
    fn of(k: String, want: &Value) -> FilterTerm {
        // A value compares as its string, or its JSON text.
        let s = |x: &Value| x.as_str().map(String::from).unwrap_or_else(|| x.to_string());
        match k.as_str() {
            "tags_any" => FilterTerm::TagsAny(want.as_array().map(|a| a.iter().map(s).collect()).unwrap_or_default()),
            "updated_after" => FilterTerm::UpdatedAfter(s(want)),
            "created_after" => FilterTerm::CreatedAfter(s(want)),
            "updated_before" => FilterTerm::UpdatedBefore(s(want)),
            "created_before" => FilterTerm::CreatedBefore(s(want)),
            "min_confidence" => FilterTerm::MinConfidence(want.as_f64()),
            "origin_prefix" => FilterTerm::OriginPrefix(s(want)),
            "kind" => FilterTerm::Kind(s(want)),
            "lang" => FilterTerm::Lang(s(want)),
            _ => FilterTerm::Column(k, s(want)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wrong_shapes_decode_for_the_primitive_to_refuse() {
        let n: NodeSpec = serde_json::from_value(json!({"id": 5, "title": "T", "tags": ["a"], "zeta": 1})).unwrap();
        assert_eq!((n.id, n.title.as_deref()), (None, Some("T")));
        assert_eq!(n.extra.keys().collect::<Vec<_>>(), ["tags", "zeta"]);
        let p: GraftPatch = serde_json::from_value(json!({"set_frontmatter": [1], "replace_body": null,
            "add_links": [{"target": "b", "rel": "see", "note": "n"}, 3], "append_section": "x", "bogus": 1}))
        .unwrap();
        assert!(matches!(p.set_frontmatter, Some(Shaped::Wrong(_))));
        assert_eq!(p.replace_body, Some(Shaped::Wrong(Value::Null)));
        let Some(Shaped::Ok(links)) = &p.add_links else { panic!("links: {:?}", p.add_links) };
        assert_eq!((links[0].rel.as_deref(), links[0].extra.len(), links[1].rel.clone()), (Some("see"), 1, None));
        assert_eq!(p.append_section, Some(SectionPatch::default()));
        assert_eq!(p.unknown.keys().collect::<Vec<_>>(), ["bogus"]);
        assert!(!p.is_empty() && GraftPatch::default().is_empty());
        let f: FrontmatterSet = serde_json::from_value(json!({"summary": "s", "type": "x"})).unwrap();
        assert_eq!(f.0[1].0, FieldName::Immutable("type".into()));
        assert_eq!(f.get(&FieldName::Summary), Some(&json!("s")));
    }

    #[test]
    fn a_scan_filter_reads_each_key_as_its_condition() {
        let f: ScanFilter =
            serde_json::from_value(json!({"tags_any": ["a", 1], "min_confidence": "x", "confidence": 0.5})).unwrap();
        assert_eq!(
            f.0,
            [
                FilterTerm::TagsAny(vec!["a".into(), "1".into()]),
                FilterTerm::MinConfidence(None),
                FilterTerm::Column("confidence".into(), "0.5".into())
            ]
        );
    }
}
