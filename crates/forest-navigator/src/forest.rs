//! What the agent walks and talks to: a forest answering Vine primitives
//! (in process through `forest_vine::Vine::call`, the same dispatcher the
//! MCP server uses) and a chat model (the Curator's OpenAI-compatible
//! client, with its endpoints and pacing). Both are traits so tests and
//! other transports plug in.

use forest_curator::Curator;
use forest_vine::Vine;
use serde_json::{Map, Value};

/// A forest answering primitives by wire name. `Err` carries the wire
/// error envelope `{"error": {...}}`.
pub trait Forest {
    /// Run one primitive.
    fn call(&mut self, prim: &str, args: &Map<String, Value>) -> Result<Value, Value>;
    /// `close_session(success, answer_nodes)`; `None` when the forest does not
    /// take it (read-only hunts).
    fn close(&mut self, success: bool, answer_nodes: &[String]) -> Option<Value>;
    /// The session id heat is laid under.
    fn session(&self) -> String;
    /// Why the forest cannot answer any more (a remote server gone), else
    /// `None`: a hunt or a bench stops with this error instead of walking
    /// on through error envelopes.
    fn lost(&self) -> Option<String> {
        None
    }
}

/// An in-process Vine.
pub struct InProcess {
    /// The engine.
    pub vine: Vine,
    /// Whether `close` calls `close_session` (`--learn`).
    pub learn: bool,
}

impl Forest for InProcess {
    fn call(&mut self, prim: &str, args: &Map<String, Value>) -> Result<Value, Value> {
        self.vine.call(prim, args).map_err(|e| e.envelope())
    }

    fn close(&mut self, success: bool, answer_nodes: &[String]) -> Option<Value> {
        if !self.learn {
            return None;
        }
        match self.vine.close_session(success, answer_nodes) {
            Ok(v) => Some(forest_vine::primitive::IntoWire::into_wire(v)),
            Err(e) => Some(e.envelope()),
        }
    }

    fn session(&self) -> String {
        self.vine.session().to_string()
    }
}

/// Why a chat model gave no reply: the model client's own error.
pub type ChatError = Box<dyn std::error::Error + Send + Sync>;

/// A chat model: messages in, the reply text out, or why not.
pub trait Chat {
    /// One completion.
    fn chat(&self, messages: &[Value]) -> Result<String, ChatError>;

    /// One completion constrained by `schema` (an OpenAI `response_format`
    /// value, e.g. [`crate::protocol::action_schema`]) when the model can
    /// honour it; the default ignores it (the text protocol).
    fn chat_with(&self, messages: &[Value], schema: Option<&Value>) -> Result<String, ChatError> {
        let _ = schema;
        self.chat(messages)
    }

    /// Whether a schema passed to [`Chat::chat_with`] is (still) sent: false
    /// for a model without structured output or once a server refused it.
    fn structured(&self) -> bool {
        false
    }
}

impl Chat for Curator {
    fn chat(&self, messages: &[Value]) -> Result<String, ChatError> {
        Ok(Curator::chat(self, messages)?)
    }

    fn chat_with(&self, messages: &[Value], schema: Option<&Value>) -> Result<String, ChatError> {
        Ok(Curator::chat_with_schema(self, messages, schema)?)
    }

    fn structured(&self) -> bool {
        self.structured_output()
    }
}

/// `{"role": role, "content": content}`.
pub fn msg(role: &str, content: &str) -> Value {
    serde_json::json!({"role": role, "content": content})
}
