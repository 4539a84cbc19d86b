//! The lexer of the SQL a client sends: words outside literals, quoted
//! identifiers and comments, with their parenthesis depth. Shared by the
//! guards of `query`/`tend` and the caps of [`crate::sqlcap`].
//!
//! In: statement text. Out: words and whether a `;` occurs. Touches nothing.

/// One lexed word (uppercased) and its parenthesis depth.
#[derive(Debug, Clone, PartialEq)]
pub struct Word {
    /// Uppercased keyword or identifier.
    pub text: String,
    /// Nesting depth of parentheses.
    pub depth: usize,
    /// Byte offset of the word in the statement.
    pub at: usize,
}

/// Words outside string literals, quoted identifiers and comments, and
/// whether a `;` occurs outside them.
pub fn lex(sql: &str) -> (Vec<Word>, bool) {
    let offs: Vec<usize> = sql.char_indices().map(|(o, _)| o).collect();
    let c: Vec<char> = sql.chars().collect();
    let mut words = vec![];
    let mut semicolon = false;
    let mut depth = 0usize;
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        match ch {
            '\'' | '"' | '`' | '[' => {
                let close = if ch == '[' { ']' } else { ch };
                i += 1;
                while i < c.len() {
                    if c[i] == close {
                        if close != ']' && i + 1 < c.len() && c[i + 1] == close {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
            '-' if c.get(i + 1) == Some(&'-') => {
                while i < c.len() && c[i] != '\n' {
                    i += 1;
                }
            }
            '/' if c.get(i + 1) == Some(&'*') => {
                i += 2;
                while i + 1 < c.len() && !(c[i] == '*' && c[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            '(' => {
                depth += 1;
                i += 1;
            }
            ')' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            ';' => {
                semicolon = true;
                i += 1;
            }
            c0 if c0.is_alphanumeric() || c0 == '_' => {
                let s = i;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
                words.push(Word { text: c[s..i].iter().collect::<String>().to_uppercase(), depth, at: offs[s] });
            }
            _ => i += 1,
        }
    }
    (words, semicolon)
}
