//! Command-hook converters from `gardener.yaml` `converters:` (dialect §3.5).

use crate::converter::{Conversion, Converter, Limits};
use crate::error::{schema, ConvertError};
use crate::text::{file_name, first_h1, stem};
use crate::values::SourceMeta;
use forest_model::slug::title_from_stem;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs an external command per file.
pub(crate) struct CommandHook {
    ext: String,
    name: String,
    template: Vec<String>,
    timeout: Duration,
}

/// Non-POSIX shlex split: whitespace separates tokens, quotes group them and
/// surrounding quotes are stripped from each token.
pub(crate) fn split_template(t: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut started = false;
    for c in t.chars() {
        match quote {
            Some(q) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            None => {
                if c == '"' || c == '\'' {
                    quote = Some(c);
                }
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out.into_iter()
        .map(|tok| {
            let b = tok.as_bytes();
            if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] {
                tok[1..tok.len() - 1].to_string()
            } else {
                tok
            }
        })
        .collect()
}

impl CommandHook {
    /// A hook for `ext` running `template` with `{input}`/`{output}`.
    pub(crate) fn new(ext: &str, template: &str, timeout: Duration) -> Self {
        let e = ext.trim().to_lowercase();
        let ext = if e.starts_with('.') { e } else { format!(".{e}") };
        CommandHook { name: format!("CommandHook({ext})"), ext, template: split_template(template), timeout }
    }
}

fn hint(stderr: &[u8], stdout: &[u8]) -> String {
    let src = if stderr.iter().any(|b| !b.is_ascii_whitespace()) { stderr } else { stdout };
    String::from_utf8_lossy(src).trim().chars().take(200).collect()
}

impl Converter for CommandHook {
    fn name(&self) -> &str {
        &self.name
    }
    fn extensions(&self) -> Vec<String> {
        vec![self.ext.clone()]
    }
    fn time_budget(&self, _: &Limits) -> Duration {
        // The hook kills its child itself; the guard only backs it up.
        self.timeout + Duration::from_secs(5)
    }
    fn convert(&self, path: &Path, _: &Limits, _: &mut Vec<String>) -> Result<Conversion, ConvertError> {
        let name = file_name(path);
        let dir = tempfile::tempdir()?;
        let output = dir.path().join(format!("{}.md", stem(path)));
        let input = path.to_string_lossy();
        let out_s = output.to_string_lossy();
        let argv: Vec<String> =
            self.template.iter().map(|t| t.replace("{input}", &input).replace("{output}", &out_s)).collect();
        let Some((prog, args)) = argv.split_first() else {
            return Err(schema(format!("converter command is empty for {name}")));
        };
        let mut child =
            Command::new(prog).args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        // Drain pipes on threads so a chatty child cannot block on a full pipe.
        let drain = |r: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                buf
            })
        };
        let out_t = drain(child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let err_t = drain(child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>));
        let start = Instant::now();
        let status = loop {
            if let Some(st) = child.try_wait()? {
                break st;
            }
            if start.elapsed() >= self.timeout {
                let _ = child.kill();
                let _ = child.wait();
                return Err(schema(format!("converter command timed out after {:?} for {name}", self.timeout)));
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let stdout = out_t.join().unwrap_or_default();
        let stderr = err_t.join().unwrap_or_default();
        if !status.success() {
            let code = status.code().unwrap_or(-1);
            let h = hint(&stderr, &stdout);
            let msg = format!("converter command failed for {name} (exit {code})");
            return Err(schema(if h.is_empty() { msg } else { format!("{msg}: {h}") }));
        }
        let text = match std::fs::read(&output) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(_) => String::from_utf8_lossy(&stdout).into_owned(),
        };
        if text.trim().is_empty() {
            return Err(schema(format!("converter command produced no markdown: {name}")));
        }
        let title = first_h1(&text).unwrap_or_else(|| title_from_stem(&stem(path)));
        Ok(Conversion::Markdown { title, body: text, meta: SourceMeta::default() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_split_strips_quotes() {
        assert_eq!(
            split_template(r#"pandoc "{input}" -o '{output}'  --x="a b""#),
            vec!["pandoc", "{input}", "-o", "{output}", "--x=\"a b\""]
        );
    }
}
