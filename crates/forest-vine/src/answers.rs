//! The answers of the primitives as types: each serializes to the bytes
//! the wire carries (field order is the wire's key order; a flag the wire
//! omits when false is skipped when false).
//!
//! In: nothing. Out: the answer types. Touches nothing.

use serde::Serialize;

use crate::budget::Dropped;
use crate::primitive::Answer;

/// A `{rel, target}` link an answer names.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRef {
    /// Relation.
    pub rel: String,
    /// Target id.
    pub target: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// `plant` of one node.
#[derive(Debug, Serialize)]
pub struct Planted {
    /// The node (the existing one under `if_absent`).
    pub id: Option<String>,
    /// False when `if_absent` found it.
    pub created: bool,
    /// The commit, `None` when nothing was written.
    pub commit: Option<String>,
    /// Its trail.
    pub trail: Option<Vec<String>>,
}

/// `plant` of a batch.
#[derive(Debug, Serialize)]
pub struct PlantedBatch {
    /// Ids created.
    pub created: Vec<String>,
    /// Ids found under `if_absent`.
    pub existing: Vec<String>,
    /// How many were created.
    pub count: usize,
    /// The commit, `None` when nothing was written.
    pub commit: Option<String>,
}

/// A valid `plant` dry run of a batch.
#[derive(Debug, Serialize)]
pub struct PlantCheckedBatch {
    /// Always true (a refusal is an error).
    pub valid: bool,
    /// Nodes checked.
    pub count: usize,
    /// Always true.
    pub dry_run: bool,
}

/// A valid `plant` dry run of one node.
#[derive(Debug, Serialize)]
pub struct PlantChecked {
    /// The node.
    pub id: Option<String>,
    /// Always true (a refusal is an error).
    pub valid: bool,
    /// Always true.
    pub dry_run: bool,
}

/// What `plant` answers.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum PlantAnswer {
    /// One node.
    One(Planted),
    /// A batch.
    Batch(PlantedBatch),
    /// A dry run of one node.
    Checked(PlantChecked),
    /// A dry run of a batch.
    CheckedBatch(PlantCheckedBatch),
}

/// `graft`.
#[derive(Debug, Serialize)]
pub struct Grafted {
    /// The node.
    pub id: String,
    /// The commit, `None` when the patch changed nothing.
    pub commit: Option<String>,
    /// Links re-added (reinforced, not duplicated).
    pub fortified: Vec<LinkRef>,
    /// Its trail.
    pub trail: Vec<String>,
    /// The body changed and the summary was not set with it.
    #[serde(skip_serializing_if = "is_false")]
    pub summary_stale: bool,
}

/// `prune`.
#[derive(Debug, Serialize)]
pub struct Pruned {
    /// The node deleted.
    pub id: String,
    /// Always true.
    pub pruned: bool,
    /// Links to it removed from other nodes.
    pub backlinks_removed: usize,
    /// Where its payload went (`_derived/graveyard/...`).
    pub payload_moved: Option<String>,
    /// The commit.
    pub commit: Option<String>,
}

/// `transplant`.
#[derive(Debug, Serialize)]
pub struct Transplanted {
    /// The new id.
    pub id: String,
    /// The old id.
    pub moved_from: String,
    /// Links to it rewritten in other nodes.
    pub backlinks_rewritten: usize,
    /// The commit.
    pub commit: Option<String>,
    /// Its new trail.
    pub trail: Vec<String>,
    /// The old id did not fit the alias list.
    #[serde(skip_serializing_if = "is_false")]
    pub alias_clipped: bool,
}

/// A hunt's part D metrics (over the session's calls, in order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Metrics {
    /// `look`/`move` calls before the first `pick`/`query`.
    pub hops_to_banana: Option<usize>,
    /// Calls before the first `pick`/`query` of an answer node.
    pub trail_len: Option<usize>,
    /// Tokens answered in all.
    pub tokens_to_banana: usize,
    /// Calls made.
    pub calls: usize,
    /// The answer nodes named.
    pub answer_nodes: Vec<String>,
}

/// How a hunt ended.
#[derive(Debug, Serialize)]
pub struct Outcome {
    /// The caller's verdict.
    pub success: bool,
    /// The nodes that answered.
    pub answer_nodes: Vec<String>,
}

/// `close_session` (also the trace's closing line).
#[derive(Debug, Serialize)]
pub struct Closed {
    /// When (seconds since the epoch).
    pub ts: f64,
    /// The session closed.
    pub session: String,
    /// How it ended.
    pub outcome: Outcome,
    /// Its metrics.
    pub metrics: Metrics,
    /// Answer nodes worth a shortcut.
    pub suggest_shortcuts: Vec<String>,
}

impl Answer for PlantAnswer {}
impl Answer for Grafted {}
impl Answer for Pruned {}
impl Answer for Transplanted {}
impl Answer for Closed {}

/// One neighbour `move` lists.
#[derive(Debug, Serialize)]
pub struct Neighbor {
    /// Its id.
    pub id: String,
    /// The relation (inverse name when inbound; `children`).
    pub rel: String,
    /// `out` or `in`.
    pub direction: &'static str,
    /// Its dialect type (`?` when the catalog has no row).
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its summary.
    pub summary: String,
    /// Its heat.
    pub heat: f64,
}

/// `move`.
#[derive(Debug, Serialize)]
pub struct Moved {
    /// Neighbours, hottest first.
    pub neighbors: Vec<Neighbor>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// One commit `history` lists.
#[derive(Debug, Serialize)]
pub struct HistoryEntry {
    /// The commit id.
    pub commit: String,
    /// Author date (ISO 8601).
    pub at: String,
    /// Subject line (redacted for a scoped caller when needed).
    pub message: String,
    /// The `Station-Principal` trailer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    /// The primitive of a Vine commit, else the subject.
    pub action: String,
}

/// `history`.
#[derive(Debug, Serialize)]
pub struct History {
    /// The node.
    pub id: String,
    /// Commits, newest first.
    pub entries: Vec<HistoryEntry>,
    /// Entries returned.
    pub returned: usize,
    /// More commits exist than were returned.
    pub truncated: bool,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// The oldest commit returned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oldest: Option<String>,
}

/// The dated span `calendar` covers.
#[derive(Debug, Serialize)]
pub struct Range {
    /// First date.
    pub first: Option<String>,
    /// Last date.
    pub last: Option<String>,
    /// Dated nodes.
    pub nodes: usize,
}

/// One period `calendar` counts.
#[derive(Debug, Serialize)]
pub struct Bucket {
    /// Its label (`2024-03`, `2024-W09`, ...).
    pub period: String,
    /// Its first day.
    pub since: String,
    /// Its last day.
    pub until: String,
    /// Nodes dated in it.
    pub nodes: usize,
}

/// `calendar`.
#[derive(Debug, Serialize)]
pub struct Calendar {
    /// `created` or `updated`.
    pub date_field: String,
    /// `day`, `week`, `month` or `year`.
    pub granularity: String,
    /// The dated span.
    pub range: Range,
    /// Periods, most recent first.
    pub buckets: Vec<Bucket>,
    /// More periods exist than were returned.
    pub truncated: bool,
    /// Nodes without the date.
    pub undated: usize,
    /// The scope asked (when one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Option<String>>,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// Counts by name, most first (a JSON object in that order).
#[derive(Debug, Default)]
pub struct Counts(pub Vec<(String, usize)>);

impl Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, n) in &self.0 {
            m.serialize_entry(k, n)?;
        }
        m.end()
    }
}

/// One root `coverage` describes.
#[derive(Debug, Serialize)]
pub struct Root {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// `branch` or `note`.
    pub kind: String,
    /// Nodes under it (itself included).
    pub nodes: usize,
    /// Branches among them.
    pub branches: usize,
    /// First date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
    /// Last date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last: Option<String>,
    /// The origin its nodes share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Nodes without an origin when others have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without_origin: Option<usize>,
}

/// `coverage`.
#[derive(Debug, Serialize)]
pub struct CoverageMap {
    /// `created` or `updated`.
    pub date_field: String,
    /// Roots, largest first.
    pub roots: Vec<Root>,
    /// Nodes in scope.
    pub total: usize,
    /// Nodes by type.
    pub types: Counts,
    /// Nodes by source.
    pub sources: Counts,
    /// Nodes without the date.
    pub undated: usize,
    /// `_meta` nodes.
    pub system: usize,
    /// The scope asked (when one was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<Option<String>>,
    /// Roots were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
}

/// `view`'s header (the server adds the bytes as an image block).
#[derive(Debug, Serialize)]
pub struct Viewed {
    /// The node.
    pub id: String,
    /// The image file.
    pub path: String,
    /// Its media type.
    pub media_type: &'static str,
    /// Its size in bytes.
    pub size: u64,
    /// Its recorded hash.
    pub payload_hash: String,
}

impl Answer for Moved {}
impl Answer for History {}
impl Answer for Calendar {}
impl Answer for CoverageMap {}
impl Answer for Viewed {}

/// One SQL cell as the wire shows it: a number, a string (long text
/// clipped, a blob described) or null.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Cell {
    /// NULL.
    Null,
    /// An integer.
    Int(i64),
    /// A real (null when not finite).
    Real(f64),
    /// Text, or the description of a blob or of clipped text.
    Text(String),
}

/// `query`.
#[derive(Debug, Serialize)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows returned.
    pub rows: Vec<Vec<Cell>>,
    /// Rows returned (after the budget).
    pub row_count: usize,
    /// The row cap stopped the read.
    pub limited: bool,
    /// Time spent.
    pub elapsed_ms: f64,
    /// The budget dropped rows.
    #[serde(skip_serializing_if = "is_false")]
    pub truncated: bool,
    /// What the budget dropped, and how to ask for less.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `tend`.
#[derive(Debug, Serialize)]
pub struct Tended {
    /// The dataset node.
    pub id: String,
    /// Rows the statement changed.
    pub rows_affected: usize,
    /// The payload's new hash.
    pub payload_hash: String,
    /// The commit recording it.
    pub commit: Option<String>,
    /// Time spent.
    pub elapsed_ms: f64,
}

/// The tables of a dataset and the example queries of its manual.
#[derive(Debug, Serialize)]
pub struct QueryManual {
    /// Columns by table.
    pub tables: Tables,
    /// Up to three `SELECT`s from its `## Query manual`.
    pub example_queries: Vec<String>,
}

/// Columns by table, in the dataset's order (a JSON object).
#[derive(Debug, Default)]
pub struct Tables(pub Vec<(String, Vec<String>)>);

impl Serialize for Tables {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The first rows of a dataset's first table.
#[derive(Debug, Serialize)]
pub struct Sample {
    /// Column names.
    pub columns: Vec<String>,
    /// Up to three rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Answer for Rows {}
impl Answer for Tended {}

/// An outbound edge in a digest.
#[derive(Debug, Serialize)]
pub struct EdgeOut {
    /// Relation.
    pub rel: String,
    /// Target id.
    pub target: String,
    /// The target's summary, clipped.
    pub target_summary: String,
}

/// An inbound edge in a digest (relation named from this side).
#[derive(Debug, Serialize)]
pub struct EdgeIn {
    /// Inverse relation.
    pub rel: String,
    /// Source id.
    pub source: String,
}

/// A child of a branch in a digest.
#[derive(Debug, Serialize)]
pub struct Child {
    /// Its id.
    pub id: String,
    /// Its summary, clipped.
    pub summary: String,
}

/// A digest's statistics.
#[derive(Debug, Serialize)]
pub struct Stats {
    /// Tokens of the body.
    pub body_tokens: i64,
    /// Edges in and out.
    pub degree: usize,
    /// Its heat.
    pub heat: f64,
}

/// `look` of one node: its digest (≤500 tokens). A field is `None` when
/// the node has none or `fields` left it out; frontmatter values are
/// passed as they are.
#[derive(Debug, Default, Serialize)]
pub struct Digest {
    /// The node.
    pub id: String,
    /// Dialect type.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Summary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Tags.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
    /// Confidence.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// `created` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<serde_json::Value>,
    /// `updated` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<serde_json::Value>,
    /// `source` as the frontmatter holds it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<serde_json::Value>,
    /// Aliases.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aliases: Option<Vec<String>>,
    /// Where it came from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// Declared language.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lang: Option<String>,
    /// Outbound edges, hottest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges_out: Option<Vec<EdgeOut>>,
    /// Inbound edges, hottest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edges_in: Option<Vec<EdgeIn>>,
    /// A branch's children.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub children: Option<Vec<Child>>,
    /// A branch's `## Cross trails`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_trails: Option<Vec<String>>,
    /// A branch's coverage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<forest_catalog::Coverage>,
    /// A leaf's section headers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outline: Option<Vec<String>>,
    /// A dataset's tables and example queries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_manual: Option<QueryManual>,
    /// A dataset's first rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sample_rows: Option<Sample>,
    /// `truncated_fields` when the clip dropped `sample_rows`: the wire
    /// names them in its place.
    #[serde(rename = "truncated_fields", skip_serializing_if = "Option::is_none")]
    pub truncated_fields_in_place: Option<Vec<&'static str>>,
    /// A dataset's notes, clipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notes: Option<String>,
    /// Statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<Stats>,
    /// Something was clipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
    /// The lists that lost items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub truncated_fields: Option<Vec<&'static str>>,
}

impl Digest {
    /// Leave out every field but `id` that `keep` refuses.
    pub fn retain(&mut self, keep: impl Fn(&str) -> bool) {
        macro_rules! drop_unkept {
            ($($f:ident = $k:literal),*) => {$(
                if !keep($k) {
                    self.$f = None;
                }
            )*};
        }
        drop_unkept!(
            node_type = "type",
            title = "title",
            summary = "summary",
            tags = "tags",
            confidence = "confidence",
            created = "created",
            updated = "updated",
            source = "source",
            aliases = "aliases",
            origin = "origin",
            lang = "lang",
            edges_out = "edges_out",
            edges_in = "edges_in",
            children = "children",
            cross_trails = "cross_trails",
            coverage = "coverage",
            outline = "outline",
            query_manual = "query_manual",
            sample_rows = "sample_rows",
            notes = "notes",
            stats = "stats"
        );
    }
}

/// `look` of a list of ids.
#[derive(Debug, Serialize)]
pub struct Digests {
    /// Digests, in request order.
    pub nodes: Vec<Digest>,
    /// Ids with no node.
    pub missing: Vec<String>,
    /// Ids dropped to fit the batch budget.
    pub dropped: Vec<String>,
    /// Some were dropped.
    pub truncated: bool,
}

/// What `look` answers.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum LookAnswer {
    /// One digest.
    One(Box<Digest>),
    /// A batch.
    Many(Digests),
}

impl Answer for LookAnswer {}

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

impl Answer for PickAnswer {}

/// The fields a windowed read adds at its end: the window, what it left
/// out, and on an empty answer why (also a plain `locate`'s empty answer:
/// `searched` and `hint`).
#[derive(Debug, Default, Serialize)]
pub struct WindowTail {
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Undated nodes the window left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_excluded: Option<i64>,
    /// Nodes searched (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Nodes inside the window (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_window: Option<i64>,
    /// Why nothing came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// `locate`.
#[derive(Debug, Serialize)]
pub struct Located {
    /// Ranked hits.
    pub results: Vec<forest_catalog::LocateItem>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// What was dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// A note on how the ranking ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The window and the empty answer's fields.
    #[serde(flatten)]
    pub tail: WindowTail,
}

/// One matching line `sniff` shows.
#[derive(Debug, Clone, Serialize)]
pub struct Match {
    /// Its section header, `None` before the first.
    pub section: Option<String>,
    /// Its 1-based line.
    pub line: usize,
    /// The text around the match.
    pub snippet: String,
}

/// One node `sniff` found.
#[derive(Debug, Serialize)]
pub struct SniffHit {
    /// Its id.
    pub id: String,
    /// Its dialect type.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its title.
    pub title: String,
    /// Its trail.
    pub trail: Vec<String>,
    /// Terms hit, matches and heat combined.
    pub score: f64,
    /// Its heat.
    pub heat: f64,
    /// Tokens of its body.
    pub body_tokens: i64,
    /// Matching lines in all.
    pub match_count: usize,
    /// More lines matched than are shown.
    pub truncated_matches: bool,
    /// Up to three matching lines.
    pub matches: Vec<Match>,
    /// A branch's hit, ranked after the leaves.
    #[serde(skip_serializing_if = "is_false")]
    pub demoted: bool,
}

/// `sniff`.
#[derive(Debug, Serialize)]
pub struct Sniffed {
    /// Hits, best first.
    pub results: Vec<SniffHit>,
    /// Nodes whose bodies were read.
    pub scanned_nodes: usize,
    /// More nodes matched than were returned.
    pub truncated: bool,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// The window and the empty answer's fields.
    #[serde(flatten)]
    pub tail: WindowTail,
}

impl Answer for Located {}
impl Answer for Sniffed {}

/// What `harvest` attaches of one node: its whole body, a matched
/// section, or (a long body without matched sections) its outline.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// The whole body (short enough).
    Whole {
        /// Always `None`.
        section: Option<String>,
        /// The body.
        body: String,
        /// Its tokens.
        body_tokens: usize,
    },
    /// A long body's outline and how to read it.
    Outline {
        /// Always `None`.
        section: Option<String>,
        /// Its section headers (first page's).
        outline: Option<Vec<String>>,
        /// Tokens of its first page.
        body_tokens: usize,
        /// How to page it.
        hint: Option<String>,
    },
    /// One matched section.
    Section {
        /// The section.
        section: String,
        /// Its text.
        body: Option<String>,
        /// Its tokens.
        body_tokens: Option<usize>,
    },
}

/// One node `harvest` returns.
#[derive(Debug, Serialize)]
pub struct HarvestItem {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its dialect type.
    #[serde(rename = "type")]
    pub node_type: String,
    /// Its trail.
    pub trail: Vec<String>,
    /// Its summary.
    pub summary: String,
    /// The fused rank score.
    pub score: f64,
    /// `locate`, `sniff` or both.
    pub found_by: Vec<&'static str>,
    /// Tokens of its body.
    pub body_tokens: i64,
    /// Matching lines.
    pub matches: Vec<Match>,
    /// Its content.
    pub content: Vec<Content>,
    /// `created`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// `updated`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub updated: Option<String>,
    /// The live nodes that supersede it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<Vec<String>>,
}

/// A superseded node `harvest` left out.
#[derive(Debug, Serialize)]
pub struct Superseded {
    /// Its id.
    pub id: String,
    /// The nodes that supersede it.
    pub by: Vec<String>,
}

/// `harvest`.
#[derive(Debug, Serialize)]
pub struct Harvested {
    /// The question.
    pub query: String,
    /// The terms sniffed.
    pub terms: Vec<String>,
    /// Evidence, best first.
    pub results: Vec<HarvestItem>,
    /// Some were dropped to fit the budget.
    pub truncated: bool,
    /// Superseded nodes left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub superseded_excluded: Option<Vec<Superseded>>,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Undated nodes the window left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub undated_excluded: Option<i64>,
    /// What the budget dropped.
    #[serde(flatten)]
    pub dropped: Dropped,
    /// Nodes searched (an empty answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub searched: Option<i64>,
    /// Why nothing came back.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

impl Answer for Harvested {}

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

/// One field of a `scan` row, typed as the catalog holds it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Field {
    /// A string.
    Str(String),
    /// A string the node may lack (null).
    OptStr(Option<String>),
    /// A list of strings.
    List(Vec<String>),
    /// A real.
    Real(f64),
    /// An integer.
    Int(i64),
    /// A branch's coverage.
    Coverage(forest_catalog::Coverage),
}

impl Field {
    /// The text a scan filter compares: a string as it is, anything else
    /// as its JSON text.
    pub fn text(&self) -> String {
        match self {
            Field::Str(s) | Field::OptStr(Some(s)) => s.clone(),
            other => serde_json::to_string(other).unwrap_or_default(),
        }
    }
}

/// One node `scan` lists: its id, then the fields asked for in the order
/// asked, then `system: true` for a `_meta` node.
#[derive(Debug)]
pub struct ScanItem {
    /// Its id.
    pub id: String,
    /// The fields asked for (`id` aside), in the order asked.
    pub fields: Vec<(String, Field)>,
    /// A `_meta` node.
    pub system: bool,
}

impl Serialize for ScanItem {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &self.id)?;
        for (k, v) in &self.fields {
            m.serialize_entry(k, v)?;
        }
        if self.system {
            m.serialize_entry("system", &true)?;
        }
        m.end()
    }
}

/// `scan`.
#[derive(Debug, Serialize)]
pub struct Scanned {
    /// Nodes, hottest first (or by id after a cursor).
    pub nodes: Vec<ScanItem>,
    /// More nodes remain.
    pub truncated: bool,
    /// The window asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<forest_catalog::Window>,
    /// Nodes that passed the filters.
    pub total: usize,
    /// Nodes returned.
    pub returned: usize,
    /// The cursor of the next page (cursor mode).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// What the budget dropped (not in cursor mode: the rest is the next page).
    #[serde(flatten)]
    pub dropped: Dropped,
}

impl Answer for Scanned {}
