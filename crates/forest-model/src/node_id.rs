//! The typed names of the dialect: [`NodeId`], a node's canonical id
//! (`notes/x`, `a/b/_index`), and [`Kind`], what the catalog files a node
//! as (a branch or a banana). Both cross serde and SQLite as the strings
//! they were, so a caller that still holds a `String` converts for free.
//!
//! In: strings. Out: the two types. Touches nothing.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use serde::{Deserialize, Serialize};

use crate::ids;

/// A node's canonical id (dialect §1.2): serialized, stored and displayed
/// as its string.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct NodeId(String);

impl NodeId {
    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
    /// The owned string.
    pub fn into_string(self) -> String {
        self.0
    }
    /// True for a branch id (`_index` or `…/_index`).
    pub fn is_branch(&self) -> bool {
        ids::is_branch_id(&self.0)
    }
}

impl From<String> for NodeId {
    fn from(s: String) -> Self {
        NodeId(s)
    }
}

impl From<&str> for NodeId {
    fn from(s: &str) -> Self {
        NodeId(s.to_string())
    }
}

impl From<NodeId> for String {
    fn from(id: NodeId) -> Self {
        id.0
    }
}

impl AsRef<str> for NodeId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for NodeId {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl Deref for NodeId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for NodeId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for NodeId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl ToSql for NodeId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        self.0.to_sql()
    }
}

impl FromSql for NodeId {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        String::column_result(v).map(NodeId)
    }
}

/// What the catalog files a node as (its `kind` column): a branch (type
/// `branch`, an `_index`) or a banana (every other node).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A branch: an `_index` node of type `branch`.
    Branch,
    /// Any other node (a note, document, dataset, ...).
    Banana,
}

impl Kind {
    /// The kind of a node of dialect type `node_type`.
    pub fn of_type(node_type: &str) -> Kind {
        if node_type == "branch" {
            Kind::Branch
        } else {
            Kind::Banana
        }
    }
    /// The catalog's spelling (`branch`, `banana`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Branch => "branch",
            Kind::Banana => "banana",
        }
    }
    /// The kind a catalog spelling names (anything but `branch` is a banana,
    /// as the catalog reads its column).
    pub fn parse(s: &str) -> Kind {
        Kind::of_type(s)
    }
    /// True for a branch.
    pub fn is_branch(self) -> bool {
        self == Kind::Branch
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A kind equals its catalog spelling (what a test or a row dump holds).
impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl ToSql for Kind {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

impl FromSql for Kind {
    fn column_result(v: ValueRef<'_>) -> FromSqlResult<Self> {
        v.as_str().map(Kind::parse)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_kinds_cross_serde_as_their_strings() {
        let id = NodeId::from("notes/x");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"notes/x\"");
        assert!(serde_json::from_str::<NodeId>("\"a/_index\"").unwrap().is_branch());
        assert_eq!(id, "notes/x");
        assert_eq!(format!("{id}"), "notes/x");
        assert_eq!(serde_json::to_string(&Kind::Banana).unwrap(), "\"banana\"");
        assert_eq!(Kind::of_type("branch"), Kind::Branch);
        assert_eq!(Kind::parse("banana"), Kind::Banana);
        let conn = rusqlite::Connection::open_in_memory().unwrap();
        let (k, i): (Kind, NodeId) = conn
            .query_row("SELECT ?1, ?2", rusqlite::params![Kind::Branch, id], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((k, i.as_str()), (Kind::Branch, "notes/x"));
    }
}
