//! The primitives of the Vine, one type each, and the registry they form
//! (vine spec v0.59; the order is the reference's `tools/list`). Each type
//! names its arguments, answer, effect, budget, tracing and MCP tool; the
//! engine method it runs lives beside its kin (`read.rs`, `scan.rs`, ...).
//! Everything that lists primitives reads [`REGISTRY`]: the tool listing,
//! the signature table, dispatch, [`budget_of`] and the write sets.
//!
//! In: nothing. Out: the registry. Touches nothing (the entries run on an
//! engine).

use std::collections::HashMap;

use once_cell::sync::Lazy;

use crate::answers::{
    Calendar as CalendarAnswer, Closed, CoverageMap, Grafted, Harvested, History as HistoryAnswer, Located, LookAnswer,
    Moved, PickAnswer, PlantAnswer, Pruned, Rows, Scanned, Sniffed, Tended, Transplanted, Viewed,
};
use crate::args::*;
use crate::engine::Vine;
use crate::error::VResult;
use crate::primitive::{entry, Advert, Effect, Entry, Primitive, Trace, Ty, P};

/// `harvest`.
pub struct Harvest;

impl Primitive for Harvest {
    const NAME: &'static str = "harvest";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::harvest::HARVEST_BUDGET);
    const TRACE: Trace = Trace::No;
    const TOOL: Option<Advert> = Some((
        "One-shot evidence: ranked notes with their body or matched sections and exact snippets (locate and sniff fused, superseded notes left out unless include_superseded). lang filters both halves.",
        &[("query", P::Str), ("terms", P::OptStrList), ("k", P::Int(3)), ("lang", P::OptStr), ("include_superseded", P::Bool(false))],
    ));
    type Args = HarvestArgs;
    type Out = Harvested;
    fn run(vine: &mut Vine, a: HarvestArgs) -> VResult<Harvested> {
        vine.harvest(&a)
    }
}

/// `locate`.
pub struct Locate;

impl Primitive for Locate {
    const NAME: &'static str = "locate";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::read::LOCATE_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Find entry points over curated metadata (titles, aliases, tags, summaries). scope: all|branches|notes. include=[\"outline\"] adds section headers; since/until (YYYY, YYYY-MM or YYYY-MM-DD) bound by date; lang filters by declared language. An empty answer points at sniff(), which searches bodies.",
        &[("query", P::Str), ("k", P::Int(5)), ("scope", P::StrDef("all")), ("type_filter", P::OptStr), ("include", P::OptStrList), ("since", P::OptStr), ("until", P::OptStr), ("date_field", P::OptStr), ("lang", P::OptStr)],
    ));
    type Args = LocateArgs;
    type Out = Located;
    fn run(vine: &mut Vine, a: LocateArgs) -> VResult<Located> {
        // the reference's `hybrid` names a fusion when `fusion` does not
        let a = LocateArgs { fusion: a.fusion_asked(), ..a };
        vine.locate(&a)
    }
}

/// `sniff`.
pub struct Sniff;

impl Primitive for Sniff {
    const NAME: &'static str = "sniff";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::sniff::SNIFF_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Literal search over node bodies: exact terms -> node + section + snippet. since/until bound it by date; lang narrows it to a declared language.",
        &[("terms", P::StrOrList), ("scope", P::OptStr), ("k", P::Int(5)), ("type_filter", P::OptStr), ("since", P::OptStr), ("until", P::OptStr), ("date_field", P::OptStr), ("lang", P::OptStr)],
    ));
    type Args = SniffArgs;
    type Out = Sniffed;
    fn run(vine: &mut Vine, a: SniffArgs) -> VResult<Sniffed> {
        vine.sniff(&a)
    }
}

/// `calendar`.
pub struct Calendar;

impl Primitive for Calendar {
    const NAME: &'static str = "calendar";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::budget::LIST_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "How many nodes each period holds, most recent first; each bucket carries the since/until the windowed reads take. granularity: day|week|month|year.",
        &[("scope", P::OptStr), ("date_field", P::StrDef("created")), ("granularity", P::StrDef("month")), ("since", P::OptStr), ("until", P::OptStr), ("limit", P::Int(24))],
    ));
    type Args = CalendarArgs;
    type Out = CalendarAnswer;
    fn run(vine: &mut Vine, a: CalendarArgs) -> VResult<CalendarAnswer> {
        vine.calendar(
            a.scope.as_deref(),
            a.date_field.as_deref(),
            a.granularity.as_deref(),
            a.since.as_deref(),
            a.until.as_deref(),
            a.limit,
        )
    }
}

/// `look`.
pub struct Look;

impl Primitive for Look {
    const NAME: &'static str = "look";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::read::LOOK_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Digest of a node (<=500 tokens): summary, outline/children, edges, provenance, stats. id may be a list of up to 10 (one 2000-token budget). fields narrows the digest; a clipped field is named in truncated_fields.",
        &[("id", P::StrOrList), ("fields", P::OptStrList)],
    ));
    type Args = LookArgs;
    type Out = LookAnswer;
    fn run(vine: &mut Vine, a: LookArgs) -> VResult<LookAnswer> {
        vine.look(&a.id, a.fields.as_deref())
    }
}

/// `move`.
pub struct Move;

impl Primitive for Move {
    const NAME: &'static str = "move";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::read::MOVE_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Neighbors of a node (<=600 tokens). rel='children' lists a branch's children; direction out|in|both.",
        &[("id", P::Str), ("rel", P::OptStr), ("direction", P::StrDef("out"))],
    ));
    type Args = MoveArgs;
    type Out = Moved;
    fn run(vine: &mut Vine, a: MoveArgs) -> VResult<Moved> {
        vine.move_(&a.id, a.rel.as_deref(), a.direction.as_deref())
    }
}

/// `pick`.
pub struct Pick;

impl Primitive for Pick {
    const NAME: &'static str = "pick";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::pick::PICK_BUDGET);
    const TRACE: Trace = Trace::WithHeat;
    const TOOL: Option<Advert> = Some((
        "The body (or sections) of a node in one 4000-token budget. id may be a list of up to 5, section a list of up to 10. A longer body comes in pages: pass next back as after.",
        &[("id", P::StrOrList), ("section", P::OptStrOrList), ("after", P::OptStr)],
    ));
    type Args = PickArgs;
    type Out = PickAnswer;
    fn run(vine: &mut Vine, a: PickArgs) -> VResult<PickAnswer> {
        vine.pick(&a.id, a.section.as_ref(), a.after.as_deref())
    }
}

/// `view`.
pub struct View;

impl Primitive for View {
    const NAME: &'static str = "view";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "The image behind a media node, as an MCP image block beside a JSON header (local payloads, images only, at most 6 MiB).",
        &[("id", P::Str)],
    ));
    type Args = IdOnly;
    type Out = Viewed;
    fn run(vine: &mut Vine, a: IdOnly) -> VResult<Viewed> {
        vine.view(&a.id)
    }
}

/// `query`.
pub struct Query;

impl Primitive for Query {
    const NAME: &'static str = "query";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::sql::QUERY_BUDGET);
    const TRACE: Trace = Trace::WithHeat;
    const TOOL: Option<Advert> = Some((
        "Read-only SELECT/WITH over a dataset node's SQLite payload (200 rows, 2 s, 2000 tokens).",
        &[("id", P::Str), ("sql", P::Str)],
    ));
    type Args = SqlArgs;
    type Out = Rows;
    fn run(vine: &mut Vine, a: SqlArgs) -> VResult<Rows> {
        vine.query(&a.id, &a.sql)
    }
}

/// `tend`.
pub struct Tend;

impl Primitive for Tend {
    const NAME: &'static str = "tend";
    const EFFECT: Effect = Effect::Write;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Write to a dataset node's SQLite payload: one INSERT/UPDATE/DELETE, WHERE required on UPDATE/DELETE; refreshes payload_hash and commits the .md.",
        &[("id", P::Str), ("sql", P::Str)],
    ));
    type Args = SqlArgs;
    type Out = Tended;
    fn run(vine: &mut Vine, a: SqlArgs) -> VResult<Tended> {
        vine.tend(&a.id, &a.sql)
    }
}

/// `scan`.
pub struct Scan;

impl Primitive for Scan {
    const NAME: &'static str = "scan";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::budget::LIST_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Metadata listing of a branch's children from the catalog (no file opens), <=800 tokens; fewer fields means more items per page.",
        &[("parent_id", P::Str), ("filter", P::OptObj), ("fields", P::OptStrList), ("recursive", P::Bool(false)), ("limit", P::Int(50))],
    ));
    type Args = ScanArgs;
    type Out = Scanned;
    fn run(vine: &mut Vine, a: ScanArgs) -> VResult<Scanned> {
        vine.scan(&a)
    }
}

/// `plant`.
pub struct Plant;

impl Primitive for Plant {
    const NAME: &'static str = "plant";
    const EFFECT: Effect = Effect::Write;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Create a node (atomic: file + parent index + one git commit). node needs id, type, title, summary (<=60 tokens), parent; a list plants up to 20 in one commit.",
        &[("node", P::ObjOrList), ("if_absent", P::Bool(false)), ("dry_run", P::Bool(false))],
    ));
    type Args = PlantArgs;
    type Out = PlantAnswer;
    fn run(vine: &mut Vine, a: PlantArgs) -> VResult<PlantAnswer> {
        vine.plant_specs(&a.node, a.if_absent, a.dry_run)
    }
}

/// `graft`.
pub struct Graft;

impl Primitive for Graft {
    const NAME: &'static str = "graft";
    const EFFECT: Effect = Effect::Write;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Patch a node in one commit: set_frontmatter, add_links, remove_links, append_section, replace_section, replace_body. Re-adding an existing link reinforces it (heat) instead of duplicating it.",
        &[("id", P::Str), ("patch", P::Obj)],
    ));
    type Args = GraftArgs;
    type Out = Grafted;
    fn run(vine: &mut Vine, a: GraftArgs) -> VResult<Grafted> {
        vine.graft(&a.id, &a.patch)
    }
}

/// `prune`.
pub struct Prune;

impl Primitive for Prune {
    const NAME: &'static str = "prune";
    const EFFECT: Effect = Effect::Write;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Delete a node in one commit; refused while other nodes point at it unless force=true.",
        &[("id", P::Str), ("force", P::Bool(false))],
    ));
    type Args = PruneArgs;
    type Out = Pruned;
    fn run(vine: &mut Vine, a: PruneArgs) -> VResult<Pruned> {
        vine.prune(&a.id, a.force)
    }
}

/// `transplant`.
pub struct Transplant;

impl Primitive for Transplant {
    const NAME: &'static str = "transplant";
    const EFFECT: Effect = Effect::Write;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = Some((
        "Move a leaf to a new id in one commit; the old id answers E_MOVED with moved_to.",
        &[("id", P::Str), ("new_id", P::Str)],
    ));
    type Args = TransplantArgs;
    type Out = Transplanted;
    fn run(vine: &mut Vine, a: TransplantArgs) -> VResult<Transplanted> {
        vine.transplant(&a.id, &a.new_id)
    }
}

/// `history`.
pub struct History;

impl Primitive for History {
    const NAME: &'static str = "history";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::budget::LIST_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> =
        Some(("The commits that touched a node, newest first (<=50).", &[("id", P::Str), ("limit", P::Int(20))]));
    type Args = HistoryArgs;
    type Out = HistoryAnswer;
    fn run(vine: &mut Vine, a: HistoryArgs) -> VResult<HistoryAnswer> {
        vine.history(&a.id, a.limit)
    }
}

/// `close_session`.
pub struct CloseSession;

impl Primitive for CloseSession {
    const NAME: &'static str = "close_session";
    const EFFECT: Effect = Effect::Heat;
    const BUDGET: Option<usize> = None;
    const TRACE: Trace = Trace::No;
    const TOOL: Option<Advert> = Some((
        "End the hunt: success with answer_nodes deposits heat on their trails and may suggest shortcuts.",
        &[("success", P::Bool(false)), ("answer_nodes", P::StrList)],
    ));
    type Args = CloseArgs;
    type Out = Closed;
    fn run(vine: &mut Vine, a: CloseArgs) -> VResult<Closed> {
        vine.close_session(a.success, &a.answer_nodes)
    }
}

/// `coverage`.
pub struct Coverage;

impl Primitive for Coverage {
    const NAME: &'static str = "coverage";
    const EFFECT: Effect = Effect::Read;
    const BUDGET: Option<usize> = Some(crate::budget::LIST_BUDGET);
    const TRACE: Trace = Trace::Yes;
    const TOOL: Option<Advert> = None;
    type Args = CoverageArgs;
    type Out = CoverageMap;
    fn run(vine: &mut Vine, a: CoverageArgs) -> VResult<CoverageMap> {
        vine.coverage(a.scope.as_deref(), a.date_field.as_deref())
    }
}

/// Every primitive, in the reference's `tools/list` order (`coverage`,
/// not advertised, last).
pub const REGISTRY: &[Entry] = &[
    entry::<Harvest>(),
    entry::<Locate>(),
    entry::<Sniff>(),
    entry::<Calendar>(),
    entry::<Look>(),
    entry::<Move>(),
    entry::<Pick>(),
    entry::<View>(),
    entry::<Query>(),
    entry::<Tend>(),
    entry::<Scan>(),
    entry::<Plant>(),
    entry::<Graft>(),
    entry::<Prune>(),
    entry::<Transplant>(),
    entry::<History>(),
    entry::<CloseSession>(),
    entry::<Coverage>(),
];

const fn writes_at(e: Effect, heat: bool) -> bool {
    matches!(e, Effect::Write) || (heat && matches!(e, Effect::Heat))
}

const fn count_writes(heat: bool) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < REGISTRY.len() {
        if writes_at(REGISTRY[i].effect, heat) {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn writes<const N: usize>(heat: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut i, mut n) = (0, 0);
    while i < REGISTRY.len() {
        if writes_at(REGISTRY[i].effect, heat) {
            out[n] = REGISTRY[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// The primitives that write git or a dataset (a write token's).
pub const FOREST_WRITES: [&str; count_writes(false)] = writes::<{ count_writes(false) }>(false);
/// The primitives that run on the writer of a writable server (the
/// writes, and those that deposit shared heat).
pub const WRITER_CALLS: [&str; count_writes(true)] = writes::<{ count_writes(true) }>(true);

/// The entry of a primitive by wire name.
pub fn find(prim: &str) -> Option<&'static Entry> {
    REGISTRY.iter().find(|e| e.name == prim)
}

/// Budget of each read primitive by wire name (the contract's ceilings).
pub fn budget_of(prim: &str) -> Option<usize> {
    find(prim).and_then(|e| e.budget)
}

type Signature = Vec<(&'static str, Ty, bool)>;

/// The signature of each primitive, read once from its argument schema
/// (the names live for the process: a few dozen short strings).
static SIGNATURES: Lazy<HashMap<&'static str, Signature>> = Lazy::new(|| {
    REGISTRY
        .iter()
        .map(|e| {
            let sig = e.signature().into_iter().map(|(n, t, r)| (&*Box::leak(n.into_boxed_str()), t, r)).collect();
            (e.name, sig)
        })
        .collect()
});

/// `(name, type, required)` per primitive (C.12 wire names + `lang` + the
/// reference's unadvertised extras), read from its argument type.
pub fn signature(prim: &str) -> Option<&'static [(&'static str, Ty, bool)]> {
    SIGNATURES.get(prim).map(Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn names_are_unique_and_every_signature_comes_from_its_arguments() {
        let mut names: Vec<&str> = REGISTRY.iter().map(|e| e.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len());
        let look = signature("look").unwrap();
        assert_eq!(look[0], ("id", Ty::StrOrList, true));
        assert_eq!(signature("plant").unwrap()[0], ("node", Ty::ObjOrList, true));
        assert_eq!(
            signature("close_session").unwrap(),
            [("success", Ty::Bool, true), ("answer_nodes", Ty::StrList, true)]
        );
        assert!(signature("forests").is_none());
    }

    #[test]
    fn the_write_sets_follow_the_effects() {
        assert_eq!(FOREST_WRITES, ["tend", "plant", "graft", "prune", "transplant"]);
        assert_eq!(WRITER_CALLS.len(), FOREST_WRITES.len() + 1);
        assert!(WRITER_CALLS.contains(&"close_session") && !FOREST_WRITES.contains(&"close_session"));
        assert_eq!(budget_of("look"), Some(crate::read::LOOK_BUDGET));
        assert_eq!(budget_of("plant"), None);
    }

    #[test]
    fn what_a_tool_requires_is_what_its_arguments_require() {
        for t in crate::tools::listing().iter().skip(1) {
            let name = t["name"].as_str().unwrap();
            let mut advertised: Vec<&str> =
                t["inputSchema"]["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let mut typed: Vec<&str> = signature(name).unwrap().iter().filter(|s| s.2).map(|s| s.0).collect();
            advertised.sort();
            typed.sort();
            assert_eq!(advertised, typed, "{name}");
        }
    }
}
