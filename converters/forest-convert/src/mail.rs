//! E-mail (`.eml`, RFC 5322/MIME) → Markdown via `mail-parser`: headers,
//! the text part (else the HTML part rendered by the HTML converter), and
//! the attachments listed by name, type and size (not converted).

use crate::error::{schema, ConvertError};
use crate::registry::Converter;
use crate::text::{file_name, stem};
use crate::{html, Conversion, Limits, SourceMeta};
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
            .filter(|m| m.subject().is_some() || m.from().is_some() || m.date().is_some())
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
        let mut body = format!("# {title}\n\n{}\n", head.join("\n"));
        if !text.is_empty() {
            body.push_str(&format!("\n{text}\n"));
        }
        if !attachments.is_empty() {
            body.push_str(&format!("\n## Attachments\n\n{}\n", attachments.join("\n")));
        }
        Ok(Conversion::Markdown { title, body, meta: SourceMeta::default() })
    }
}
