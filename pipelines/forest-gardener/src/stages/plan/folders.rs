//! Navigable branches for sub-folders: which id folder a source folder's
//! branch lives in. A parent whose sub-folders alone would fill more than
//! half a branch (and whose entries in all pass the split trigger) puts its
//! new sub-folder branches into the same name-prefix buckets as leaves
//! (`<parent>/~<prefix>/<sub>/_index`), planned from the names of all its
//! sub-folders at once, so an adopt of a 200-folder drive writes a root of
//! a few buckets and moves nothing. The decision is made from the source's
//! directory (names only) before the first sub-folder's branch is written.
//!
//! A folder branch, once written, is never moved: a parent that crosses the
//! trigger in a later sync buckets only its new sub-folders (moving whole
//! subtrees would rewrite every node under them).
//!
//! In: a source-relative folder path. Out: its id folder. Touches: reads
//! the source's directory listing (names and types, once per parent with a
//! new sub-folder; for an object-store source one delimiter listing of the
//! parent's prefix) and the forest (which branches exist); creates bucket
//! branches in the batch.

use super::ranges;
use super::split::{self, Dest, Kids, Member};
use super::Batch;
use super::Planner;
use crate::source::Access;
use forest_model::ids;
use forest_model::slug::slugify;
use std::collections::HashMap;

/// Sub-folders past which a parent's sub-folders may be bucketed (half the
/// entry lines a branch can hold by tokens: a sub-folder's line carries its
/// derived summary, ~48 tokens): they are when their lines and the
/// folder's own files pass the split trigger.
pub(crate) const SUB_FOLDER_TRIGGER: usize = split::SPLIT_TOKENS / SUB_ENTRY_TOKENS / 2;
/// Tokens of a sub-branch entry line (id and a derived branch summary of
/// up to ~40 tokens).
const SUB_ENTRY_TOKENS: usize = 48;
/// Tokens of a leaf's entry line (id and a summary of up to 60 tokens).
const LEAF_ENTRY_TOKENS: usize = 70;
/// Remembered placements; files arrive in path order, so a small cache
/// hits, and a miss only re-checks a few branches.
const CACHE_CAP: usize = 4096;

/// Where each sub-folder key of a parent goes, `None` when the parent's
/// sub-folders stay flat: at most [`SUB_FOLDER_TRIGGER`] of them, or all
/// its entries (`sub_keys` plus `files`) within the split trigger. Keys
/// that stay directly in the parent are absent; a chain lists bucket
/// components, outermost first. `prefix` and `kids` are the parent
/// branch's bucket prefix and existing child buckets: new range buckets
/// ([`ranges`]) when it has none, the ranges that cover each name when it
/// has range buckets, and the name-prefix rule of earlier builds when its
/// buckets are name prefixes.
pub(crate) fn plan_sub_folders(
    prefix: &str,
    kids: &Kids,
    sub_keys: &[String],
    files: usize,
) -> Option<HashMap<String, Vec<String>>> {
    let tokens = sub_keys.len() * SUB_ENTRY_TOKENS + files.min(split::SPLIT_ENTRIES) * LEAF_ENTRY_TOKENS;
    if sub_keys.len() <= SUB_FOLDER_TRIGGER
        || (sub_keys.len() + files <= split::SPLIT_ENTRIES && tokens <= split::SPLIT_TOKENS)
    {
        return None;
    }
    if let Kids::Prefixes(children) = kids {
        // A parent bucketed by name prefixes (earlier builds) keeps that rule.
        let members: Vec<Member> =
            sub_keys.iter().map(|k| Member { key: k.clone(), tokens: SUB_ENTRY_TOKENS }).collect();
        let plan = split::plan_split(prefix, children, &members);
        return Some(
            sub_keys
                .iter()
                .zip(plan)
                .filter_map(|(k, d)| match d {
                    Dest::Stay => None,
                    Dest::Existing(c) => Some((k.clone(), vec![split::bucket_component(&c)])),
                    Dest::New(chain) => Some((k.clone(), chain.iter().map(|c| split::bucket_component(c)).collect())),
                })
                .collect(),
        );
    }
    let fresh = plan_ranges(sub_keys, files);
    if let Kids::Ranges(children) = kids {
        // A run cut short keeps the plan of the same listing (its buckets
        // are made as their first folder lands, so some may not exist yet):
        // same listing, same ranges, the same tree as an uncut run.
        let planned: std::collections::HashSet<&String> = fresh.values().filter_map(|c| c.first()).collect();
        if children.iter().all(|r| planned.contains(&r.component())) {
            return Some(fresh);
        }
        // Otherwise the listing grew: existing ranges cover every name.
        let route = |k: &String| Some((k.clone(), vec![ranges::route(k, children)?.component()]));
        return Some(sub_keys.iter().filter_map(route).collect());
    }
    Some(fresh)
}

/// New range buckets for all of a parent's sub-folders (`sub_keys`, sorted
/// and unique) beside its `files`.
fn plan_ranges(sub_keys: &[String], files: usize) -> HashMap<String, Vec<String>> {
    let items: Vec<ranges::Item> =
        sub_keys.iter().map(|k| ranges::Item { key: k.clone(), tokens: SUB_ENTRY_TOKENS }).collect();
    // Room for the bucket lines beside up to ten of the folder's own files.
    let top = split::SPLIT_TOKENS.saturating_sub(files.min(10) * LEAF_ENTRY_TOKENS) / ranges::BUCKET_ENTRY_TOKENS;
    let chains = ranges::plan(&items, &ranges::Frame { before: None, top });
    sub_keys.iter().cloned().zip(chains).collect()
}

fn join(folder: &str, comp: &str) -> String {
    if folder.is_empty() {
        comp.to_string()
    } else {
        format!("{folder}/{comp}")
    }
}

impl Planner<'_> {
    /// The id folder of source-relative folder `rel_dir`: an existing
    /// branch for it wherever it is (flat or in a bucket), else its place
    /// by the parent's sub-folder plan. Bucket branches on the way are
    /// created in the batch; the folder's own branch is not.
    pub(crate) fn folder_for(&mut self, rel_dir: &str, batch: &mut Batch) -> String {
        if let Some(f) = self.folders.placed.get(rel_dir) {
            return f.clone();
        }
        let placed = match rel_dir.rfind('/') {
            _ if rel_dir.is_empty() => self.src.dest.clone().unwrap_or_default(),
            Some(i) => {
                let parent = self.folder_for(&rel_dir[..i], batch);
                self.place_sub_folder(&rel_dir[..i], &parent, &rel_dir[i + 1..], batch)
            }
            None => {
                let parent = self.folder_for("", batch);
                self.place_sub_folder("", &parent, rel_dir, batch)
            }
        };
        if self.folders.placed.len() >= CACHE_CAP {
            self.folders.placed.clear();
        }
        self.folders.placed.insert(rel_dir.to_string(), placed.clone());
        placed
    }

    /// Place sub-folder `name` of source folder `parent_rel` (id folder
    /// `parent`).
    fn place_sub_folder(&mut self, parent_rel: &str, parent: &str, name: &str, batch: &mut Batch) -> String {
        let slug = slugify(name);
        let key = split::routing_key(&slug);
        if let Some(found) = self.existing_sub_folder(parent, &slug, &key, batch) {
            return found;
        }
        let Some(chain) = self.sub_folder_plan(parent_rel, parent, batch).and_then(|p| p.get(&key).cloned()) else {
            return join(parent, &slug);
        };
        self.ensure_branch(parent, batch);
        let mut at = parent.to_string();
        for c in &chain {
            at = join(&at, c);
            self.ensure_branch(&at, batch);
        }
        // An existing bucket may be split further: descend as a leaf would.
        let at = self.route_leaf(&at, &key, batch);
        join(&at, &slug)
    }

    /// The id folder of an existing branch for sub-folder `slug` of id
    /// folder `parent`: directly under it, or in any bucket on the key's
    /// route (a folder stays in the bucket it was planted in when that
    /// bucket is split later).
    fn existing_sub_folder(&mut self, parent: &str, slug: &str, key: &str, batch: &mut Batch) -> Option<String> {
        let mut at = parent.to_string();
        for _ in 0..64 {
            let cand = join(&at, slug);
            if self.exists(&ids::branch_id_for_folder(&cand), batch) {
                return Some(cand);
            }
            let body = self.body_mut(&ids::branch_id_for_folder(&at), batch)?;
            let next = match split::kids(&at, body.entry_ids()) {
                Kids::None => return None,
                Kids::Ranges(r) => ranges::route(key, &r)?.component(),
                Kids::Prefixes(p) => split::bucket_component(split::longest_match(key, &p)?),
            };
            at = join(&at, &next);
        }
        None
    }

    /// The sub-folder plan of source folder `parent_rel` (computed once per
    /// run from the source's directory).
    fn sub_folder_plan(
        &mut self,
        parent_rel: &str,
        parent: &str,
        batch: &mut Batch,
    ) -> Option<&HashMap<String, Vec<String>>> {
        if !self.folders.plans.contains_key(parent_rel) {
            let plan = self.compute_sub_folder_plan(parent_rel, parent, batch);
            if self.folders.plans.len() >= CACHE_CAP {
                self.folders.plans.clear();
            }
            self.folders.plans.insert(parent_rel.to_string(), plan);
        }
        self.folders.plans.get(parent_rel)?.as_ref()
    }

    fn compute_sub_folder_plan(
        &mut self,
        parent_rel: &str,
        parent: &str,
        batch: &mut Batch,
    ) -> Option<HashMap<String, Vec<String>>> {
        let (dirs, files) = match self.access {
            Access::Local { root, follow_symlinks } => {
                crate::walk::census(root, parent_rel, &self.ignore_rules(), *follow_symlinks)?
            }
            Access::S3 { loc, client, .. } => crate::walk::census_s3(client, loc, parent_rel, &self.ignore_rules())?,
            Access::Rclone { loc, rclone, census, .. } => {
                // The listing's census answers most folders without a
                // process: only one with many sub-folders needs their names.
                if census.get().and_then(|c| c.counts(parent_rel)).is_some_and(|(d, _)| d <= SUB_FOLDER_TRIGGER) {
                    return None;
                }
                crate::walk::census_rclone(rclone, loc, parent_rel, &self.ignore_rules())?
            }
            Access::Git { git, .. } => {
                let git = git.as_ref().ok()?;
                let repo = git.repo().ok()?;
                let tree = repo.find_tree(git.tree).ok()?;
                crate::walk::census_git(&repo, &tree, parent_rel, &self.ignore_rules())?
            }
        };
        if dirs.len() <= SUB_FOLDER_TRIGGER {
            return None;
        }
        let mut keys: Vec<String> = dirs.iter().map(|d| split::routing_key(&slugify(d))).collect();
        keys.sort();
        keys.dedup();
        let kids = match self.body_mut(&ids::branch_id_for_folder(parent), batch) {
            Some(body) => split::kids(parent, body.entry_ids()),
            None => Kids::None,
        };
        plan_sub_folders(split::folder_prefix_of(parent), &kids, &keys, files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[(&str, usize)]) -> Vec<String> {
        let mut out = vec![];
        for (stem, n) in names {
            out.extend((0..*n).map(|i| format!("{stem}-{i:04}")));
        }
        out.sort();
        out
    }

    fn sizes(plan: &HashMap<String, Vec<String>>) -> HashMap<Vec<String>, usize> {
        let mut sizes: HashMap<Vec<String>, usize> = HashMap::new();
        for chain in plan.values() {
            *sizes.entry(chain.clone()).or_default() += 1;
        }
        sizes
    }

    #[test]
    fn few_sub_folders_stay_flat() {
        let k = keys(&[("eng", 25)]);
        assert_eq!(plan_sub_folders("", &Kids::None, &k, 1000), None, "25 sub-folders fit beside leaf buckets");
        let k = keys(&[("eng", 40)]);
        assert_eq!(plan_sub_folders("", &Kids::None, &k, 5), None, "40 lines and 5 files fit one branch's tokens");
        assert!(plan_sub_folders("", &Kids::None, &k, 30).is_some(), "with 30 files they would not");
    }

    #[test]
    fn two_hundred_department_folders_get_one_level_of_ranges() {
        let k = keys(&[("eng", 25), ("fin", 25), ("hr", 25), ("legal", 25), ("ops", 25), ("sales", 50), ("sec", 25)]);
        let plan = plan_sub_folders("", &Kids::None, &k, 1).expect("200 sub-folders are bucketed");
        assert_eq!(plan.len(), 200, "every sub-folder goes into a bucket");
        assert!(plan.values().all(|c| c.len() == 1), "one bucket level: {plan:?}");
        let s = sizes(&plan);
        assert!(s.len() <= 12, "{} buckets", s.len());
        assert!(s.values().all(|&n| n <= ranges::NEW_ENTRIES && n * SUB_ENTRY_TOKENS <= ranges::NEW_TOKENS), "{s:?}");
        assert_eq!(plan["eng-0000"], vec!["~eng-000..eng-0022".to_string()], "{s:?}");
        assert_eq!(plan["sales-0020"], vec!["~sales-0013..sales-0035".to_string()], "{s:?}");
    }

    #[test]
    fn seven_hundred_twenty_one_package_folders_need_one_level() {
        let k: Vec<String> = (0..721).map(|i| format!("lib{}{i:03}", ["gtk", "x", "py"][i % 3])).collect();
        let plan = plan_sub_folders("", &Kids::None, &k, 0).expect("bucketed");
        assert!(plan.values().all(|c| c.len() == 1), "one level");
        assert!(sizes(&plan).len() <= 40);
    }

    #[test]
    fn existing_ranges_take_every_new_name() {
        let kids = Kids::Ranges(vec![
            ranges::Range { lo: "a".into(), hi: "k".into() },
            ranges::Range { lo: "l".into(), hi: "z".into() },
        ]);
        let k = keys(&[("eng", 100), ("proj", 100)]);
        let plan = plan_sub_folders("", &kids, &k, 0).unwrap();
        assert_eq!(plan["eng-0005"], vec!["~a..k".to_string()]);
        assert_eq!(plan["proj-0005"], vec!["~l..z".to_string()]);
    }

    #[test]
    fn a_run_cut_short_keeps_the_plan_of_the_same_listing() {
        let k = keys(&[("eng", 100), ("proj", 100)]);
        let full = plan_sub_folders("", &Kids::None, &k, 0).unwrap();
        let first = ranges::parse(&full["eng-0000"][0]).unwrap();
        // Only the first range was made before the run stopped.
        let again = plan_sub_folders("", &Kids::Ranges(vec![first]), &k, 0).unwrap();
        assert_eq!(again, full);
    }

    #[test]
    fn a_parent_with_prefix_buckets_keeps_the_prefix_rule() {
        let k = keys(&[("proj", 120)]);
        let plan = plan_sub_folders("", &Kids::Prefixes(vec!["proj-000".to_string()]), &k, 40).unwrap();
        assert_eq!(plan["proj-0005"], vec!["~proj-000".to_string()]);
    }
}
