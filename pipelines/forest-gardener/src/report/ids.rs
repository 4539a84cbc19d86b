//! [`IdList`]: a report's list of node ids with memory bounded by a
//! constant, not by the run. An adopt of 10^6 files reports 10^6 planted
//! ids (~70 MB as `String`s, the largest thing an adopt kept that grew with
//! the corpus); the oldest entries go to an anonymous temp file and are
//! read back, in order, when the report is printed.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use serde::ser::{Error as _, SerializeSeq, Serializer};
use serde::Serialize;

/// Entries kept in memory before the oldest [`KEEP`] go to the spill file.
/// At least a default batch (5,000 files): the plan stage re-keys the
/// current batch's ids, and those then are in memory.
const SPILL_AT: usize = 2 * KEEP;
/// Entries kept in memory after a spill.
const KEEP: usize = 8_192;

/// Node ids in insertion order; the oldest spill to disk past [`SPILL_AT`].
#[derive(Default)]
pub struct IdList {
    /// Spilled entries, one per line, oldest first (`None` until needed,
    /// or when the temp file could not be made: then all stay in memory).
    spill: Option<File>,
    /// Lines and bytes in the spill file.
    spilled: usize,
    spilled_bytes: u64,
    /// The newest entries.
    mem: Vec<String>,
}

impl IdList {
    /// An empty list.
    pub fn new() -> IdList {
        IdList::default()
    }

    /// Number of ids.
    pub fn len(&self) -> usize {
        self.spilled + self.mem.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Append an id.
    pub fn push(&mut self, id: String) {
        self.mem.push(id);
        if self.mem.len() >= SPILL_AT {
            self.spill_oldest();
        }
    }

    /// The last id.
    pub fn last(&self) -> Option<String> {
        match self.mem.last() {
            Some(id) => Some(id.clone()),
            None => self.iter().last(),
        }
    }

    /// Every id, oldest first (spilled ones read back; an unreadable spill
    /// file ends the iteration early, and [`Serialize`] reports it).
    pub fn iter(&self) -> impl Iterator<Item = String> + '_ {
        self.spilled_ids().map_while(Result::ok).chain(self.mem.iter().cloned())
    }

    /// All ids as a vector.
    pub fn to_vec(&self) -> Vec<String> {
        self.iter().collect()
    }

    /// Re-key ids: each id that is a key of `renamed` becomes its value.
    /// Entries in memory change in place; the spill file is rewritten only
    /// when a key can be in it (not a branch id, not in memory), which a
    /// run meets once per folder whose committed leaves move into buckets.
    pub fn rename(&mut self, renamed: &HashMap<String, String>) -> io::Result<()> {
        if renamed.is_empty() {
            return Ok(());
        }
        let mut in_mem: HashSet<&str> = HashSet::new();
        let outside = if self.spilled > 0 {
            in_mem.extend(self.mem.iter().map(String::as_str));
            renamed.keys().any(|k| !forest_model::ids::is_branch_id(k) && !in_mem.contains(k.as_str()))
        } else {
            false
        };
        drop(in_mem);
        for id in &mut self.mem {
            if let Some(n) = renamed.get(id.as_str()) {
                id.clone_from(n);
            }
        }
        if !outside {
            return Ok(());
        }
        let mut fresh = IdList::new();
        for id in self.spilled_ids() {
            let id = id?;
            let id = renamed.get(&id).cloned().unwrap_or(id);
            fresh.mem.push(id);
            if fresh.mem.len() >= KEEP {
                fresh.write_spill(KEEP)?;
            }
        }
        let n = fresh.mem.len();
        fresh.write_spill(n)?;
        fresh.mem = std::mem::take(&mut self.mem);
        *self = fresh;
        Ok(())
    }

    /// Spill the oldest entries, keeping [`KEEP`] in memory; on an I/O
    /// error they stay in memory (only memory is lost, never an id).
    fn spill_oldest(&mut self) {
        let n = self.mem.len().saturating_sub(KEEP);
        if let Err(e) = self.write_spill(n) {
            tracing::debug!(event = "gardener.report_spill", error = %e, "report ids stay in memory");
        }
    }

    /// Move the first `n` in-memory entries to the spill file.
    fn write_spill(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        if self.spill.is_none() {
            self.spill = Some(tempfile::tempfile()?);
        }
        let Some(file) = self.spill.as_ref() else { return Ok(()) };
        let mut buf = Vec::with_capacity(n * 48);
        for id in &self.mem[..n] {
            buf.extend_from_slice(id.as_bytes());
            buf.push(b'\n');
        }
        file.write_all_at(&buf, self.spilled_bytes)?;
        self.spilled_bytes += buf.len() as u64;
        self.spilled += n;
        self.mem.drain(..n);
        Ok(())
    }

    /// The spilled ids, oldest first.
    fn spilled_ids(&self) -> SpillReader<'_> {
        SpillReader { file: self.spill.as_ref(), pos: 0, end: self.spilled_bytes, buf: Vec::new(), at: 0 }
    }
}

/// Reads a spill file's lines in 64 KiB chunks.
struct SpillReader<'a> {
    file: Option<&'a File>,
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
}

impl Iterator for SpillReader<'_> {
    type Item = io::Result<String>;

    fn next(&mut self) -> Option<io::Result<String>> {
        let file = self.file?;
        loop {
            if let Some(nl) = self.buf[self.at..].iter().position(|&b| b == b'\n') {
                let line = String::from_utf8_lossy(&self.buf[self.at..self.at + nl]).into_owned();
                self.at += nl + 1;
                return Some(Ok(line));
            }
            if self.pos >= self.end {
                return None;
            }
            self.buf.drain(..self.at);
            self.at = 0;
            let want = (self.end - self.pos).min(64 << 10) as usize;
            let start = self.buf.len();
            self.buf.resize(start + want, 0);
            if let Err(e) = file.read_exact_at(&mut self.buf[start..], self.pos) {
                self.file = None;
                return Some(Err(e));
            }
            self.pos += want as u64;
        }
    }
}

impl Serialize for IdList {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for id in self.spilled_ids() {
            seq.serialize_element(&id.map_err(S::Error::custom)?)?;
        }
        for id in &self.mem {
            seq.serialize_element(id)?;
        }
        seq.end()
    }
}

impl Clone for IdList {
    fn clone(&self) -> IdList {
        let mut out = IdList::new();
        for id in self.iter() {
            out.push(id);
        }
        out
    }
}

impl std::fmt::Debug for IdList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IdList").field("len", &self.len()).field("newest", &self.mem.last()).finish()
    }
}

impl From<Vec<String>> for IdList {
    fn from(v: Vec<String>) -> IdList {
        let mut out = IdList::new();
        for id in v {
            out.push(id);
        }
        out
    }
}

impl<T: AsRef<str>> PartialEq<Vec<T>> for IdList {
    fn eq(&self, other: &Vec<T>) -> bool {
        self.len() == other.len() && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

impl<T: AsRef<str>, const N: usize> PartialEq<[T; N]> for IdList {
    fn eq(&self, other: &[T; N]) -> bool {
        self.len() == N && self.iter().zip(other).all(|(a, b)| a == b.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("folder-{:02}/doc-{i:06}", i % 7)).collect()
    }

    #[test]
    fn spills_past_the_threshold_and_reads_back_in_order() {
        let want = ids(3 * SPILL_AT + 17);
        let list = IdList::from(want.clone());
        assert!(list.spilled > 0 && list.mem.len() < SPILL_AT, "spilled {}", list.spilled);
        assert_eq!(list.len(), want.len());
        assert_eq!(list.to_vec(), want);
        assert_eq!(list.last().as_deref(), want.last().map(String::as_str));
        let json = serde_json::to_value(&list).unwrap();
        assert_eq!(json, serde_json::to_value(&want).unwrap());
        assert_eq!(list.clone().to_vec(), want);
    }

    #[test]
    fn rename_reaches_spilled_and_in_memory_ids() {
        let mut want = ids(SPILL_AT + 100);
        let mut list = IdList::from(want.clone());
        assert!(list.spilled > 0);
        // One spilled id, one in memory, one unknown, one branch id.
        let renamed: HashMap<String, String> = [
            (want[3].clone(), "folder-03/~d/doc-000003".to_string()),
            (want[want.len() - 1].clone(), "folder-x/~d/last".to_string()),
            ("nowhere/doc".to_string(), "elsewhere/doc".to_string()),
            ("folder-01/_index".to_string(), "folder-01/~d/_index".to_string()),
        ]
        .into_iter()
        .collect();
        list.rename(&renamed).unwrap();
        want[3] = "folder-03/~d/doc-000003".into();
        let n = want.len();
        want[n - 1] = "folder-x/~d/last".into();
        assert_eq!(list.to_vec(), want);
        assert_eq!(list.len(), want.len());
        // More pushes after a rewrite keep the order.
        list.push("tail".into());
        want.push("tail".into());
        assert_eq!(list.to_vec(), want);
    }

    #[test]
    fn a_small_list_never_touches_the_disk() {
        let mut list = IdList::new();
        assert!(list.is_empty() && list.last().is_none());
        list.push("a/b".into());
        let renamed: HashMap<String, String> = [("a/b".to_string(), "a/~x/b".to_string())].into_iter().collect();
        list.rename(&renamed).unwrap();
        assert!(list.spill.is_none());
        assert_eq!(list.to_vec(), vec!["a/~x/b".to_string()]);
    }
}
