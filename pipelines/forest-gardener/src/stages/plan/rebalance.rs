//! Navigable branches, applied (the rule and its reasons: [`super::split`]):
//! routing a new leaf into its folder's buckets, and the rebalance step at
//! the end of planning a batch, which splits every touched branch that
//! overflows.
//!
//! In: the batch's planned nodes and branch bodies. Out: the same batch
//! with bucket branches added and leaves re-homed: a leaf planted in this
//! batch simply gets its final id; a committed leaf is transplanted (old id
//! into `aliases` and `moved_from`, backlinks, heat and payload follow, its
//! `source_path` stays). Touches: reads passports and the catalog's edges;
//! writes nothing on disk except renaming this batch's own cached bodies.

use super::ranges::{self, Item};
use super::split::{self, Dest, Kids, Member, Route};
use super::Batch;
use crate::report::MoveRecord;
use crate::stages::plan::payload::cached_body_path;
use forest_catalog::Catalog;
use forest_model::aliases::record_move;
use forest_model::ids;
use forest_model::index::DIRECT_BANANAS;
use forest_model::node::Node;
use forest_model::tokens::estimate_tokens;
use forest_model::yaml::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

/// Deeper than any real split can go (each level lengthens the prefix).
const MAX_DEPTH: usize = 64;
/// Tokens of a bucket's entry line in its parent (id and derived summary).
const BUCKET_ENTRY_TOKENS: usize = 32;

fn join(folder: &str, comp: &str) -> String {
    if folder.is_empty() {
        comp.to_string()
    } else {
        format!("{folder}/{comp}")
    }
}

impl super::Planner<'_> {
    /// The folder (bucket path) a new leaf of routing key `key` lives in
    /// under id folder `folder`, creating an on-demand bucket of a fully
    /// split branch. The folder's own branch must exist.
    pub(crate) fn route_leaf(&mut self, folder: &str, key: &str, batch: &mut Batch) -> String {
        let mut at = folder.to_string();
        for _ in 0..MAX_DEPTH {
            let bid = ids::branch_id_for_folder(&at);
            let Some(body) = self.body_mut(&bid, batch) else { break };
            let children = match split::kids(&at, body.entry_ids()) {
                Kids::None => break,
                Kids::Ranges(r) => {
                    let Some(c) = ranges::route(key, &r) else { break };
                    at = join(&at, &c.component());
                    continue;
                }
                Kids::Prefixes(p) => p,
            };
            match split::route(key, split::folder_prefix_of(&at), &children) {
                Route::Child(c) => at = join(&at, &split::bucket_component(&c)),
                Route::NewChild(c) => {
                    at = join(&at, &split::bucket_component(&c));
                    self.ensure_branch(&at, batch);
                }
                Route::Here => break,
            }
        }
        at
    }

    /// A leaf this run may re-home: planted by the Gardener from this source.
    fn owns(&self, n: &Node) -> bool {
        n.get_str("source_path").is_some()
            && n.get_str("source").as_deref() == Some("ingest")
            && n.get_str("source_name").is_none_or(|s| s == self.src.name)
    }

    /// Split every branch this batch touched that overflows, until none
    /// does (a bucket that receives leaves is checked in turn); the ids it
    /// re-homed, old -> final.
    pub(crate) fn rebalance(&mut self, batch: &mut Batch, catalog: Option<&Catalog>) -> HashMap<String, String> {
        let mut work: BTreeSet<String> = batch.dirty.iter().filter(|id| ids::is_branch_id(id)).cloned().collect();
        let mut renamed: HashMap<String, String> = HashMap::new();
        let mut committed_moves: Vec<String> = vec![];
        while let Some(bid) = work.pop_first() {
            for target in self.split_branch(&bid, batch, &mut renamed, &mut committed_moves) {
                work.insert(target);
            }
        }
        if renamed.is_empty() {
            return renamed;
        }
        // A leaf re-homed twice (its new bucket overflowed in turn): every
        // old id names the final one.
        let keys: Vec<String> = renamed.keys().cloned().collect();
        for k in keys {
            let mut to = renamed[&k].clone();
            let mut hops = 0;
            while let Some(next) = renamed.get(&to) {
                to = next.clone();
                hops += 1;
                if hops > MAX_DEPTH {
                    break;
                }
            }
            renamed.insert(k, to);
        }
        self.follow_renames(batch, catalog, &renamed, &committed_moves);
        renamed
    }

    /// Split one branch if it overflows; the branches that received leaves.
    fn split_branch(
        &mut self,
        bid: &str,
        batch: &mut Batch,
        renamed: &mut HashMap<String, String>,
        committed_moves: &mut Vec<String>,
    ) -> Vec<String> {
        let folder = ids::folder_of(bid).to_string();
        let Some(body) = self.body_mut(bid, batch) else { return vec![] };
        let text = body.render();
        let entries = text.lines().filter(|l| l.starts_with("- [[")).count();
        if !split::overflows(entries, estimate_tokens(&text)) {
            return vec![];
        }
        let direct = body.section_entries(DIRECT_BANANAS);
        let kids = split::kids(&folder, body.entry_ids());
        let mut members: Vec<Member> = vec![];
        let mut member_ids: Vec<(String, String)> = vec![];
        for (id, line) in direct {
            if ids::is_branch_id(&id) || ids::parent_index(&id).as_deref() != Some(bid) {
                continue;
            }
            let Some(n) = self.load(&id, batch) else { continue };
            if !self.owns(&n) {
                continue;
            }
            let leaf = id.rsplit('/').next().unwrap_or(&id).to_string();
            // The line grows by the bucket components of its new id.
            members.push(Member { key: split::routing_key(&leaf), tokens: estimate_tokens(&line) + 2 });
            member_ids.push((id, leaf));
        }
        let tokens = estimate_tokens(&text);
        let mut targets: BTreeSet<String> = BTreeSet::new();
        let homes: Vec<Option<String>> = match kids {
            Kids::Prefixes(children) => {
                let plan = self.plan_members(&folder, entries, tokens, &children, &members, &member_ids);
                plan.into_iter().zip(&members).map(|(d, m)| self.legacy_home(&folder, d, &m.key, batch)).collect()
            }
            Kids::Ranges(r) => self.range_homes(&folder, (entries, tokens), &r, &members, &member_ids, batch),
            Kids::None => {
                let (homes, siblings) =
                    self.split_ranges(bid, &folder, (entries, tokens), &members, &member_ids, batch);
                if siblings {
                    targets.extend(ids::parent_index(bid));
                }
                homes
            }
        };
        let mut gone: HashSet<String> = HashSet::new();
        for ((id, leaf), home) in member_ids.into_iter().zip(homes) {
            let Some(home) = home else { continue };
            let Some(rel) = self.load(&id, batch).and_then(|n| n.get_str("source_path")) else { continue };
            let new_id = self.free_leaf_id(&home, &leaf, &rel, batch);
            if self.rehome(&id, &new_id, batch) {
                committed_moves.push(id.clone());
            }
            renamed.insert(id.clone(), new_id);
            gone.insert(id);
            targets.insert(ids::branch_id_for_folder(&home));
        }
        if let Some(body) = self.body_mut(bid, batch) {
            if body.remove_many(&gone) {
                batch.dirty.insert(bid.to_string());
            }
        }
        targets.into_iter().collect()
    }

    /// The folder a legacy (name-prefix) plan sends a member to, created.
    fn legacy_home(&mut self, folder: &str, dest: Dest, key: &str, batch: &mut Batch) -> Option<String> {
        match dest {
            Dest::Stay => None,
            Dest::Existing(c) => Some(self.route_leaf(&join(folder, &split::bucket_component(&c)), key, batch)),
            Dest::New(chain) => {
                let mut at = folder.to_string();
                for c in &chain {
                    at = join(&at, &split::bucket_component(c));
                }
                self.ensure_branch(&at, batch);
                Some(at)
            }
        }
    }

    /// Create the bucket chain `chain` (components) under `base`; its folder.
    fn make_chain(&mut self, base: &str, chain: &[String], batch: &mut Batch) -> String {
        let mut at = base.to_string();
        for c in chain {
            at = join(&at, c);
            self.ensure_branch(&at, batch);
        }
        at
    }

    /// True when the leaf `id` is committed (not planted by this batch).
    fn committed(&self, id: &str) -> bool {
        self.forest.join(ids::id_to_path(id)).exists()
    }

    /// An overflowing branch with range buckets: its new leaves go into the
    /// range that covers them; committed leaves stay unless they alone
    /// overflow the branch.
    fn range_homes(
        &mut self,
        folder: &str,
        (entries, tokens): (usize, usize),
        children: &[ranges::Range],
        members: &[Member],
        member_ids: &[(String, String)],
        batch: &mut Batch,
    ) -> Vec<Option<String>> {
        let fresh: Vec<bool> = member_ids.iter().map(|(id, _)| !self.committed(id)).collect();
        let (fe, ft) =
            members.iter().zip(&fresh).filter(|(_, f)| **f).fold((0, 0), |a, (m, _)| (a.0 + 1, a.1 + m.tokens));
        let move_committed = split::overflows(entries - fe, tokens.saturating_sub(ft));
        members
            .iter()
            .zip(&fresh)
            .map(|(m, f)| {
                if !*f && !move_committed {
                    return None;
                }
                let c = ranges::route(&m.key, children)?.component();
                Some(self.route_leaf(&join(folder, &c), &m.key, batch))
            })
            .collect()
    }

    /// How many more bucket entries branch `bid` can list.
    fn room(&mut self, bid: &str, batch: &mut Batch) -> usize {
        let Some(body) = self.body_mut(bid, batch) else { return 0 };
        let text = body.render();
        let entries = text.lines().filter(|l| l.starts_with("- [[")).count();
        room_of(entries, estimate_tokens(&text))
    }

    /// The first range split of an overflowing branch (and whether it added
    /// sibling buckets beside it). A source folder hands all its leaves to
    /// new range buckets (its committed ones move once). A bucket keeps its
    /// committed leaves; new leaves that sort after all of them go into new
    /// sibling ranges while its parent has room (time-ordered names add
    /// breadth, not depth), the rest into range buckets inside it.
    fn split_ranges(
        &mut self,
        bid: &str,
        folder: &str,
        (entries, tokens): (usize, usize),
        members: &[Member],
        member_ids: &[(String, String)],
        batch: &mut Batch,
    ) -> (Vec<Option<String>>, bool) {
        let items: Vec<Item> = members.iter().map(|m| Item { key: m.key.clone(), tokens: m.tokens }).collect();
        let member_tokens: usize = members.iter().map(|m| m.tokens).sum();
        let own_room = room_of(entries - members.len(), tokens.saturating_sub(member_tokens));
        let is_bucket = !split::folder_prefix_of(folder).is_empty();
        let fresh: Vec<bool> = member_ids.iter().map(|(id, _)| !self.committed(id)).collect();
        let kept_fit = {
            let (e, t) =
                members.iter().zip(&fresh).filter(|(_, f)| !**f).fold((0, 0), |a, (m, _)| (a.0 + 1, a.1 + m.tokens));
            !split::overflows(entries - members.len() + e, tokens.saturating_sub(member_tokens) + t)
        };
        let parent = ids::parent_index(bid).filter(|_| is_bucket);
        if parent.is_none() || !kept_fit || fresh.iter().all(|f| !*f) {
            // Everything into new buckets under this branch.
            let chains = ranges::plan(&items, &ranges::Frame { before: None, top: own_room });
            return (chains.iter().map(|c| Some(self.make_chain(folder, c, batch))).collect(), false);
        }
        let plan = ranges::keep_and_grow(&items, &fresh);
        let mut homes: Vec<Option<String>> = vec![None; members.len()];
        let parent = parent.expect("a bucket has a parent");
        let parent_folder = ids::folder_of(&parent).to_string();
        let sibling_room = self.room(&parent, batch);
        let mut siblings = false;
        let mut inside: Vec<usize> = plan.inside.clone();
        if !plan.tail.is_empty() {
            if sibling_room > 0 {
                let tail: Vec<Item> = plan.tail.iter().map(|&i| items[i].clone()).collect();
                let frame = ranges::Frame { before: plan.last_kept.as_deref(), top: sibling_room };
                for (&i, c) in plan.tail.iter().zip(ranges::plan(&tail, &frame)) {
                    homes[i] = Some(self.make_chain(&parent_folder, &c, batch));
                }
                siblings = true;
            } else {
                inside.extend(&plan.tail);
            }
        }
        let (ie, it) = inside.iter().fold((0, 0), |a, &i| (a.0 + 1, a.1 + items[i].tokens));
        let (ke, kt) = plan.kept.iter().fold((0, 0), |a, &i| (a.0 + 1, a.1 + items[i].tokens));
        let others = (entries - members.len(), tokens.saturating_sub(member_tokens));
        if !inside.is_empty() && split::overflows(others.0 + ke + ie, others.1 + kt + it) {
            let sub: Vec<Item> = inside.iter().map(|&i| items[i].clone()).collect();
            let top = room_of(others.0 + ke, others.1 + kt);
            for (&i, c) in inside.iter().zip(ranges::plan(&sub, &ranges::Frame { before: None, top })) {
                homes[i] = Some(self.make_chain(folder, &c, batch));
            }
        }
        (homes, siblings)
    }

    /// Where each direct leaf of an overflowing branch goes. A bucket whose
    /// committed leaves fit beside the new buckets keeps them and hands on
    /// only this batch's new leaves: growth that piles into one bucket
    /// (numbered names entering a new decade: `doc-1038500…` after
    /// `doc-103850`) moves nobody. A source folder's first split, or a
    /// bucket that overflows with committed leaves alone, plans them all.
    fn plan_members(
        &self,
        folder: &str,
        entries: usize,
        tokens: usize,
        children: &[String],
        members: &[Member],
        member_ids: &[(String, String)],
    ) -> Vec<Dest> {
        let prefix = split::folder_prefix_of(folder);
        let fresh: Vec<usize> =
            (0..members.len()).filter(|&i| !self.forest.join(ids::id_to_path(&member_ids[i].0)).exists()).collect();
        if !prefix.is_empty() && !fresh.is_empty() && fresh.len() < members.len() {
            let fresh_members: Vec<Member> = fresh.iter().map(|&i| members[i].clone()).collect();
            let plan = split::plan_split(prefix, children, &fresh_members);
            let mut left = (entries, tokens);
            let mut opened: BTreeSet<&str> = BTreeSet::new();
            for (d, m) in plan.iter().zip(&fresh_members) {
                if *d != Dest::Stay {
                    left = (left.0.saturating_sub(1), left.1.saturating_sub(m.tokens));
                }
                if let Some(first) = match d {
                    Dest::New(chain) => chain.first(),
                    _ => None,
                } {
                    opened.insert(first.as_str());
                }
            }
            let after = (left.0 + opened.len(), left.1 + opened.len() * BUCKET_ENTRY_TOKENS);
            if !split::overflows(after.0, after.1) {
                let mut out = vec![Dest::Stay; members.len()];
                for (&i, d) in fresh.iter().zip(plan) {
                    out[i] = d;
                }
                return out;
            }
        }
        split::plan_split(prefix, children, members)
    }

    /// Give leaf `old` the id `new` (its entry moves to the new parent; the
    /// caller removes the old entry). True when `old` was committed, i.e.
    /// this is a transplant rather than a rename of a node of this batch.
    fn rehome(&mut self, old: &str, new: &str, batch: &mut Batch) -> bool {
        let committed = self.forest.join(ids::id_to_path(old)).exists();
        let Some(mut n) = self.load(old, batch) else { return false };
        batch.nodes.remove(old);
        batch.dirty.remove(old);
        self.taken.remove(old);
        n.set_str("id", new);
        let (old_dir, new_dir) = (self.forest.join(ids::folder_of(old)), self.forest.join(ids::folder_of(new)));
        // Local payloads (`<leaf>.db`, `_assets/…`) live beside the passport.
        if let Some(p) = n.get_str("payload").filter(|p| !forest_model::lint::is_remote(p)) {
            let (from, to) = (old_dir.join(&p), new_dir.join(&p));
            let mut staged = false;
            for (_, fin) in batch.renames.iter_mut().filter(|(_, f)| *f == from) {
                *fin = to.clone();
                staged = true;
            }
            if committed && !staged && from.exists() {
                batch.renames.push((from, to));
            }
        }
        if n.get_str("content").as_deref() == Some("cached") {
            let (from, to) = (cached_body_path(self.forest, old), cached_body_path(self.forest, new));
            let mut pending = false;
            for (_, fin) in batch.renames.iter_mut().filter(|(_, f)| *f == from) {
                *fin = to.clone();
                pending = true;
            }
            if !pending && from.exists() {
                if committed {
                    batch.renames.push((from, to));
                } else if !self.opts.dry_run {
                    // This batch's own cache file (regenerable).
                    let _ = to.parent().map(std::fs::create_dir_all);
                    let _ = std::fs::rename(&from, &to);
                }
            }
        }
        if committed {
            n.set_str("updated", &self.today);
            self.report.aliases_clipped += record_move(&mut n, old);
            batch.deletes.insert(ids::id_to_path(old));
            batch.removed_ids.push(old.to_string());
            batch.rekeys.push((old.to_string(), new.to_string()));
            self.report.moved.push(MoveRecord { from: old.to_string(), to: new.to_string() });
            batch.moved += 1;
        }
        let summary = n.get_str("summary").unwrap_or_default();
        self.put(new, n, batch);
        self.taken.insert(new.to_string());
        let parent = ids::parent_index(new).unwrap_or_else(|| ids::MASTER.to_string());
        self.add_entry(&parent, DIRECT_BANANAS, new, &summary, batch);
        committed
    }

    /// After a rebalance: every list of the batch that names a re-homed id
    /// names the new one; links pointing at moved ids follow.
    fn follow_renames(
        &mut self,
        batch: &mut Batch,
        catalog: Option<&Catalog>,
        renamed: &HashMap<String, String>,
        committed_moves: &[String],
    ) {
        let map = |id: &mut String| {
            if let Some(n) = renamed.get(id.as_str()) {
                *id = n.clone();
            }
        };
        let mut seen_rel: HashSet<String> = HashSet::new();
        for (rel, e) in batch.manifest_up.iter_mut() {
            map(&mut e.id);
            seen_rel.insert(rel.clone());
        }
        for d in batch.curation.iter_mut() {
            if let Some(n) = renamed.get(&d.id) {
                d.id = n.clone();
                d.parent = ids::parent_index(n).unwrap_or_else(|| ids::MASTER.to_string());
            }
        }
        let existing: Vec<(String, usize)> = batch.curation_existing.drain().collect();
        for (mut id, n) in existing {
            map(&mut id);
            batch.curation_existing.insert(id, n);
        }
        batch.ids.iter_mut().for_each(map);
        // A file moved at its source and re-homed in the same batch: heat
        // and the report follow it to its final id.
        batch.rekeys.iter_mut().for_each(|(_, to)| map(to));
        // (this batch's part; the pipeline renames the run's report).
        self.report.rename_ids(renamed);
        // Committed leaves keep their manifest row under the same path.
        for old in committed_moves {
            let Some(new) = renamed.get(old) else { continue };
            let Some(n) = batch.nodes.get(new) else { continue };
            let Some(rel) = n.get_str("source_path") else { continue };
            if seen_rel.insert(rel.clone()) {
                if let Some(e) = super::moves::batch_entry_from_node(new, Some(n)) {
                    batch.manifest_up.push((rel, e));
                }
            }
        }
        // Links: from committed nodes (the catalog's edges) and from this batch.
        let mut sources: BTreeSet<String> = batch.nodes.keys().filter(|id| !ids::is_branch_id(id)).cloned().collect();
        if let Some(cat) = catalog {
            for old in committed_moves {
                if let Ok(edges) = cat.edges_in(old) {
                    sources.extend(edges.into_iter().map(|e| renamed.get(&e.src).cloned().unwrap_or(e.src)));
                }
            }
        }
        for src in sources {
            let Some(mut n) = self.load(&src, batch) else { continue };
            if rewrite_links(&mut n, renamed) {
                if self.forest.join(ids::id_to_path(&src)).exists() {
                    n.set_str("updated", &self.today);
                }
                self.put(&src, n, batch);
            }
        }
    }
}

/// Bucket entries a branch of `entries` lines and `tokens` tokens can still
/// list within the split trigger.
fn room_of(entries: usize, tokens: usize) -> usize {
    let by_entries = split::SPLIT_ENTRIES.saturating_sub(entries);
    let by_tokens = split::SPLIT_TOKENS.saturating_sub(tokens) / ranges::BUCKET_ENTRY_TOKENS;
    by_entries.min(by_tokens)
}

/// Point `links:` targets named in `renamed` at their new ids.
fn rewrite_links(n: &mut Node, renamed: &HashMap<String, String>) -> bool {
    let mut changed = false;
    if let Some(Value::Sequence(links)) = n.front.get_mut("links") {
        for l in links.iter_mut() {
            if let Some(m) = l.as_mapping_mut() {
                let to = m.get("target").and_then(|t| t.as_str()).and_then(|t| renamed.get(t)).cloned();
                if let Some(to) = to {
                    m.insert("target".into(), to.into());
                    changed = true;
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use crate::env::testing::Fixture;
    use crate::env::RunEnv;
    use crate::manifest::Manifest;
    use crate::stages::commit::{finish_batch, HealthRecords};
    use crate::stages::convert::convert_all;
    use crate::stages::plan::{Batch, PlanState};
    use crate::stages::work::Work;
    use forest_model::ids;
    use std::collections::HashMap;

    fn plant_batch(fx: &Fixture, env: &RunEnv, st: &mut PlanState, range: std::ops::Range<usize>) -> Batch {
        let work: Vec<Work> = range
            .map(|i| Work::Plant(fx.write(&format!("big/memo-{i:04}.md"), &format!("# M{i}\n\nMemo {i}.\n"))))
            .collect();
        let converted = convert_all(env, &work, &HashMap::new());
        let mut batch = Batch::default();
        let (renamed, part) = {
            let mut run = st.planner(env);
            for w in &work {
                run.apply(w, &converted, &mut batch, None);
            }
            (run.rebalance(&mut batch, None), run.report)
        };
        // As the pipeline folds the stage's part into the run's report.
        st.report.rename_ids(&renamed);
        st.report.absorb(part);
        batch
    }

    /// The pipeline's commit step: branch scent, the commit, then the
    /// committed ids are no longer reserved.
    fn commit(env: &RunEnv, st: &mut PlanState, batch: &mut Batch, manifest: &mut Manifest) {
        st.planner(env).derive_branch_scents(batch);
        let mut health = HealthRecords::default();
        let done = finish_batch(env, batch, manifest, None, &mut health).expect("commit");
        health.wait();
        if done.written {
            st.taken.clear();
        }
        done.fold(&mut st.report, &mut vec![]);
    }

    fn entries(batch: &Batch, id: &str) -> usize {
        batch.nodes[id].body.lines().filter(|l| l.starts_with("- [[")).count()
    }

    #[test]
    fn a_new_overflowing_folder_is_planted_into_buckets_with_final_ids() {
        let fx = Fixture::new();
        let env = fx.env();
        let mut st = PlanState::default();
        let mut batch = plant_batch(&fx, &env, &mut st, 0..160);
        let run = &st;
        batch.render_bodies();
        assert_eq!(batch.moved, 0, "nothing committed moved");
        assert_eq!(run.report.planted.len(), 160);
        for id in &run.report.planted.to_vec() {
            assert!(id.starts_with("big/~memo-0"), "{id}");
            let bucket = ids::folder_of(id).rsplit('/').next().unwrap();
            assert!(super::ranges::parse(bucket).is_some() && id.matches('/').count() == 2, "one range level: {id}");
            assert!(batch.nodes.contains_key(id), "the report names the final id {id}");
            let parent = ids::parent_index(id).expect("parent");
            assert!(batch.nodes[&parent].body.contains(&format!("[[{id}]]")), "{id} listed in {parent}");
        }
        assert!(batch.manifest_up.iter().all(|(_, e)| batch.nodes.contains_key(&e.id)));
        assert!(entries(&batch, "big/_index") <= 40);
        let branches: Vec<String> = batch.nodes.keys().filter(|i| ids::is_branch_id(i)).cloned().collect();
        for b in &branches {
            assert!(entries(&batch, b) <= 75, "{b}");
        }
        let first = batch.nodes.keys().filter(|i| i.starts_with("big/~")).min().expect("a bucket").clone();
        assert_eq!(first, "big/~memo-000..memo-0053/_index", "160 names: three balanced ranges of about 54");
        assert!(batch.nodes[&first].get_str("summary").is_some_and(|s| s.contains("'memo-000'")));
    }

    #[test]
    fn staged_payloads_follow_a_leaf_renamed_into_its_bucket() {
        let fx = Fixture::new();
        let env = fx.env();
        let mut st = PlanState::default();
        let mut work: Vec<Work> = (0..155)
            .map(|i| Work::Plant(fx.write(&format!("big/memo-{i:04}.md"), &format!("# M{i}\n\nMemo {i}.\n"))))
            .collect();
        work.push(Work::Plant(fx.write("big/memo-0042x.csv", "item,qty\nbolt,3\nnut,4\n")));
        let converted = convert_all(&env, &work, &HashMap::new());
        let mut run = st.planner(&env);
        let mut batch = Batch::default();
        for w in &work {
            run.apply(w, &converted, &mut batch, None);
        }
        run.rebalance(&mut batch, None);
        let id = run.report.planted.iter().find(|i| i.ends_with("memo-0042x")).expect("planted");
        assert!(id.starts_with("big/~memo-0") && id.matches('/').count() == 2, "{id}");
        let fin = fx.forest.join(ids::folder_of(&id)).join("memo-0042x.db");
        assert!(batch.renames.iter().any(|(staged, f)| *f == fin && staged.exists()), "{:?}", batch.renames);
        assert_eq!(batch.nodes[&id].get_str("payload").as_deref(), Some("memo-0042x.db"));
    }

    #[test]
    fn a_committed_folder_that_crosses_the_limit_is_transplanted_once() {
        let fx = Fixture::new();
        let mut manifest = Manifest::open(std::path::Path::new(":memory:")).expect("manifest");
        let env = fx.env();
        let mut st = PlanState::default();
        let mut first = plant_batch(&fx, &env, &mut st, 0..140);
        commit(&env, &mut st, &mut first, &mut manifest);
        assert!(fx.forest.join("big/memo-0001.md").exists(), "140 short memos fit one branch");
        let mut second = plant_batch(&fx, &env, &mut st, 140..160);
        assert_eq!(second.moved, 140);
        let to = &st.report.moved.iter().find(|m| m.from == "big/memo-0001").expect("moved").to.clone();
        let n = &second.nodes[to];
        assert!(n.get_list("aliases").contains(&"big/memo-0001".to_string()));
        assert_eq!(n.get_list("moved_from"), vec!["big/memo-0001"]);
        assert_eq!(n.get_str("source_path").as_deref(), Some("big/memo-0001.md"));
        assert!(second.deletes.contains("big/memo-0001.md"));
        assert!(second.rekeys.contains(&("big/memo-0001".to_string(), to.clone())));
        assert!(second.manifest_up.iter().any(|(p, e)| p == "big/memo-0001.md" && &e.id == to));
        commit(&env, &mut st, &mut second, &mut manifest);
        assert!(!fx.forest.join("big/memo-0001.md").exists());
        assert!(fx.forest.join(format!("{to}.md")).exists());
        // One more file: routed into its bucket, nobody moves.
        let mut third = plant_batch(&fx, &env, &mut st, 160..161);
        assert_eq!(third.moved, 0);
        let last = st.report.planted.last().expect("planted");
        let kids: Vec<super::ranges::Range> = third
            .nodes
            .keys()
            .chain(std::iter::once(&last))
            .filter_map(|i| i.strip_prefix("big/")?.split('/').next().and_then(super::ranges::parse))
            .collect();
        assert!(last.starts_with("big/~") && last.matches('/').count() == 2, "{last}");
        assert!(kids.iter().all(|r| r.lo.as_str() <= "memo-0160"), "routed into the last range: {last} {kids:?}");
        commit(&env, &mut st, &mut third, &mut manifest);
    }
}
