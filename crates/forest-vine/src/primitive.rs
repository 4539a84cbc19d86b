//! What a primitive is: one type per primitive carrying its wire name, its
//! argument type (`Deserialize + JsonSchema`), its answer type, what it
//! touches, its token budget, how it is traced and how it is advertised.
//! [`crate::prims`] lists them; the MCP tool list, the signature table that
//! checks arguments, the dispatch, the budgets and the write sets are all
//! read from that list.
//!
//! In: nothing. Out: the trait, the type-erased [`Entry`] and the signature
//! a schema gives. Touches nothing.

use std::collections::BTreeSet;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::engine::Vine;
use crate::error::{VResult, VineError};

/// What a primitive touches beyond `_derived/` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only (its session heat stays in the caller's session).
    Read,
    /// Deposits shared heat (runs on the writer; a read token may call it).
    Heat,
    /// Writes git or a dataset (a write token, on the writer).
    Write,
}

/// How a call is traced (vine spec §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trace {
    /// Not traced.
    No,
    /// Traced.
    Yes,
    /// Traced, and the named node gains session heat.
    WithHeat,
}

/// Schema shape of one advertised parameter (the reference's pydantic
/// rendering; see [`crate::tools`]).
#[derive(Debug, Clone, Copy)]
pub enum P {
    /// string, required
    Str,
    /// string|null = null
    OptStr,
    /// integer = default
    Int(i64),
    /// boolean = default
    Bool(bool),
    /// string = default
    StrDef(&'static str),
    /// [string], required
    StrList,
    /// [string]|null = null
    OptStrList,
    /// string|[string], required
    StrOrList,
    /// string|[string]|null = null
    OptStrOrList,
    /// object, required
    Obj,
    /// object|null = null
    OptObj,
    /// object|[object], required
    ObjOrList,
}

/// How a primitive is advertised as an MCP tool: description and the
/// parameters the reference lists (`forest` is added to each).
pub type Advert = (&'static str, &'static [(&'static str, P)]);

/// An answer as it leaves on the wire.
pub trait IntoWire {
    /// The JSON value sent.
    fn into_wire(self) -> Value;
}

/// A typed answer (serialized once, at the edge). Every primitive's
/// answer is one of [`crate::answers`].
pub trait Answer: serde::Serialize {}

impl<T: Answer> IntoWire for T {
    fn into_wire(self) -> Value {
        // An answer is plain data (strings, numbers, lists): it always
        // serializes.
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// One primitive.
pub trait Primitive {
    /// Wire name.
    const NAME: &'static str;
    /// What it touches.
    const EFFECT: Effect;
    /// Token ceiling of its answer (reads), `None` when none applies.
    const BUDGET: Option<usize>;
    /// Tracing.
    const TRACE: Trace;
    /// Its MCP tool, `None` when it is not advertised.
    const TOOL: Option<Advert>;
    /// Its arguments; the signature table is read from their schema.
    type Args: DeserializeOwned + JsonSchema;
    /// Its answer.
    type Out: IntoWire;
    /// Run it on an engine.
    fn run(vine: &mut Vine, args: Self::Args) -> VResult<Self::Out>;
}

/// A primitive with its types erased, as the registry holds it.
#[derive(Clone, Copy)]
pub struct Entry {
    /// Wire name.
    pub name: &'static str,
    /// What it touches.
    pub effect: Effect,
    /// Token ceiling.
    pub budget: Option<usize>,
    /// Tracing.
    pub trace: Trace,
    /// MCP tool.
    pub tool: Option<Advert>,
    schema: fn() -> schemars::Schema,
    run: fn(&mut Vine, Value) -> VResult<Value>,
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Entry").field("name", &self.name).field("effect", &self.effect).finish()
    }
}

/// The entry of `T`.
pub const fn entry<T: Primitive>() -> Entry {
    Entry {
        name: T::NAME,
        effect: T::EFFECT,
        budget: T::BUDGET,
        trace: T::TRACE,
        tool: T::TOOL,
        schema: schema_of::<T>,
        run: run_erased::<T>,
    }
}

fn schema_of<T: Primitive>() -> schemars::Schema {
    schemars::schema_for!(T::Args)
}

fn run_erased<T: Primitive>(vine: &mut Vine, args: Value) -> VResult<Value> {
    // The signature table has checked every type already; this cannot
    // fail on what it admits.
    let a: T::Args = serde_json::from_value(args).map_err(|e| VineError::schema(format!("{}: {e}", T::NAME)))?;
    Ok(T::run(vine, a)?.into_wire())
}

impl Entry {
    /// Run on checked arguments (an object, nulls removed).
    pub fn run(&self, vine: &mut Vine, args: Value) -> VResult<Value> {
        (self.run)(vine, args)
    }

    /// The JSON Schema of its arguments.
    pub fn schema(&self) -> schemars::Schema {
        (self.schema)()
    }

    /// Its signature `(name, type, required)`, in declaration order, read
    /// from the schema of its arguments.
    pub fn signature(&self) -> Vec<(String, Ty, bool)> {
        let schema = self.schema();
        let root = schema.as_value();
        let required: Vec<&str> = root
            .get("required")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let Some(props) = root.get("properties").and_then(Value::as_object) else { return vec![] };
        props
            .iter()
            .map(|(k, s)| {
                let mut kinds = BTreeSet::new();
                kinds_of(s, root, &mut kinds);
                let ty =
                    Ty::from_kinds(&kinds).unwrap_or_else(|| panic!("{}.{k}: no wire type for {kinds:?}", self.name));
                (k.clone(), ty, required.contains(&k.as_str()))
            })
            .collect()
    }
}

/// The JSON kinds a schema admits (`null` left out; `array<T>` per item kind).
fn kinds_of(s: &Value, root: &Value, out: &mut BTreeSet<String>) {
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        let name = r.rsplit('/').next().unwrap_or_default();
        if let Some(def) = root.get("$defs").and_then(|d| d.get(name)) {
            kinds_of(def, root, out);
        }
    }
    for key in ["anyOf", "oneOf"] {
        for x in s.get(key).and_then(Value::as_array).into_iter().flatten() {
            kinds_of(x, root, out);
        }
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    for t in types {
        match t {
            "null" => {}
            "array" => {
                let mut inner = BTreeSet::new();
                kinds_of(s.get("items").unwrap_or(&Value::Null), root, &mut inner);
                out.extend(inner.into_iter().map(|i| format!("array<{i}>")));
            }
            t => {
                out.insert(t.to_string());
            }
        }
    }
}

/// Wire types of the signature table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    /// string
    Str,
    /// integer (bool refused)
    Int,
    /// boolean
    Bool,
    /// list of strings
    StrList,
    /// string or list of strings
    StrOrList,
    /// object
    Obj,
    /// object or list of objects
    ObjOrList,
}

impl Ty {
    fn from_kinds(k: &BTreeSet<String>) -> Option<Ty> {
        let k: Vec<&str> = k.iter().map(String::as_str).collect();
        Some(match k.as_slice() {
            ["string"] => Ty::Str,
            ["integer"] => Ty::Int,
            ["boolean"] => Ty::Bool,
            ["array<string>"] => Ty::StrList,
            ["array<string>", "string"] => Ty::StrOrList,
            ["object"] => Ty::Obj,
            ["array<object>", "object"] => Ty::ObjOrList,
            _ => return None,
        })
    }

    /// The type as an error message names it.
    pub fn name(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "integer",
            Ty::Bool => "boolean",
            Ty::StrList => "list of string",
            Ty::StrOrList => "string or list of string",
            Ty::Obj => "object",
            Ty::ObjOrList => "object or list of object",
        }
    }

    /// True when `v` has this type.
    pub fn admits(self, v: &Value) -> bool {
        let strs = |v: &Value| v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
        match self {
            Ty::Str => v.is_string(),
            Ty::Int => v.is_i64() || v.is_u64(),
            Ty::Bool => v.is_boolean(),
            Ty::StrList => strs(v),
            Ty::StrOrList => v.is_string() || strs(v),
            Ty::Obj => v.is_object(),
            Ty::ObjOrList => v.is_object() || v.as_array().is_some_and(|a| a.iter().all(Value::is_object)),
        }
    }
}
