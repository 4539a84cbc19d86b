//! E-mail → Markdown: `.eml` (RFC 5322/MIME) via `mail-parser`, Outlook
//! `.msg` (OLE compound file, MS-OXMSG) via `msg_parser`. Both give the
//! headers, the text body (else the HTML body rendered by the HTML
//! converter), and the attachments listed by name, type and size (not
//! converted).

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::html;
use crate::text::{file_name, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use mail_parser::{Address, MessageParser, MimeHeaders};
use std::path::Path;

/// The e-mail converter.
pub(crate) struct Eml;

fn addresses(a: Option<&Address<'_>>) -> Option<String> {
    let list: Vec<String> = a?
        .iter()
        .map(|x| match (x.name(), x.address()) {
            (Some(n), Some(e)) => format!("{n} <{e}>"),
            (None, Some(e)) => e.to_string(),
            (Some(n), None) => n.to_string(),
            (None, None) => String::new(),
        })
        .filter(|s| !s.is_empty())
        .collect();
    (!list.is_empty()).then(|| list.join(", "))
}

impl Converter for Eml {
    fn name(&self) -> &str {
        "Eml"
    }
    fn extensions(&self) -> Vec<String> {
        [".eml", ".mbox"].map(String::from).to_vec()
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let msg = MessageParser::default()
            .parse(&bytes)
            // A MIME entity without Subject/From/Date (a saved part) is still mail.
            .filter(|m| m.subject().is_some() || m.from().is_some() || m.date().is_some() || m.content_type().is_some())
            .ok_or_else(|| schema(format!("not an e-mail message: {}", file_name(path))))?;
        let title = msg
            .subject()
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| title_from_stem(&stem(path)));
        let mut head = Vec::new();
        for (k, v) in [
            ("From", addresses(msg.from())),
            ("To", addresses(msg.to())),
            ("Cc", addresses(msg.cc())),
            ("Date", msg.date().map(|d| d.to_rfc3339())),
        ] {
            if let Some(v) = v {
                head.push(format!("- **{k}:** {v}"));
            }
        }
        let text = match msg.body_text(0) {
            Some(t) if !t.trim().is_empty() && msg.text_body.first() != msg.html_body.first() => t.trim().to_string(),
            _ => msg.body_html(0).map(|h| html::html_content(&h).1).unwrap_or_default(),
        };
        let attachments: Vec<String> = msg
            .attachments()
            .map(|a| {
                let name = a.attachment_name().unwrap_or("(unnamed)").replace('`', "'");
                let ty = a.content_type().map(|c| match c.subtype() {
                    Some(s) => format!("{}/{s}", c.ctype()),
                    None => c.ctype().to_string(),
                });
                format!("- `{name}` ({}, {} bytes)", ty.unwrap_or_else(|| "unknown type".into()), a.contents().len())
            })
            .collect();
        Ok(render(title, &head, &text, &attachments))
    }
}

/// The common layout of a message node.
fn render(title: String, head: &[String], text: &str, attachments: &[String]) -> Conversion {
    let mut body = format!("# {title}\n\n{}\n", head.join("\n"));
    if !text.is_empty() {
        body.push_str(&format!("\n{text}\n"));
    }
    if !attachments.is_empty() {
        body.push_str(&format!("\n## Attachments\n\n{}\n", attachments.join("\n")));
    }
    Conversion::Markdown { title, body, meta: SourceMeta::default() }
}

/// The Outlook `.msg` converter.
pub(crate) struct Msg;

fn person(p: &msg_parser::Person) -> Option<String> {
    let (n, e) = (p.name.trim(), p.email.trim());
    match (n.is_empty(), e.is_empty()) {
        (false, false) if n != e => Some(format!("{n} <{e}>")),
        (_, false) => Some(e.to_string()),
        (false, true) => Some(n.to_string()),
        (true, true) => None,
    }
}

fn people(list: &[msg_parser::Person]) -> Option<String> {
    let v: Vec<String> = list.iter().filter_map(person).collect();
    (!v.is_empty()).then(|| v.join(", "))
}

impl Converter for Msg {
    fn name(&self) -> &str {
        "Msg"
    }
    fn extensions(&self) -> Vec<String> {
        vec![".msg".into()]
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let bytes = std::fs::read(path)?;
        let msg = msg_parser::Outlook::from_slice(&bytes)
            .map_err(|e| schema(format!("not an Outlook message: {}: {e}", file_name(path))))?;
        let title = Some(msg.subject.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| title_from_stem(&stem(path)));
        let date = [&msg.message_delivery_time, &msg.client_submit_time].into_iter().find(|d| !d.is_empty()).cloned();
        let mut head = Vec::new();
        for (k, v) in [("From", person(&msg.sender)), ("To", people(&msg.to)), ("Cc", people(&msg.cc)), ("Date", date)]
        {
            if let Some(v) = v {
                head.push(format!("- **{k}:** {v}"));
            }
        }
        let text = match msg.body.trim() {
            "" if !msg.html.trim().is_empty() => html::html_content(&msg.html).1,
            t => t.replace("\r\n", "\n"),
        };
        let attachments: Vec<String> = msg
            .attachments
            .iter()
            .map(|a| {
                let name = [&a.long_file_name, &a.display_name, &a.file_name]
                    .into_iter()
                    .find(|n| !n.trim().is_empty())
                    .map_or("(unnamed)".to_string(), |n| n.replace('`', "'"));
                let ty = if a.mime_tag.is_empty() { "unknown type" } else { a.mime_tag.as_str() };
                format!("- `{name}` ({ty}, {} bytes)", a.payload_bytes.len())
            })
            .collect();
        Ok(render(title, &head, &text, &attachments))
    }
}
