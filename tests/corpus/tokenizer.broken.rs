//! A toy tokenizer: lifetimes, chars and raw strings must not confuse brace matching.
use std::collections::HashMap;
use std::fmt;

/* Block comments /* nest */ in Rust { */

/// A token borrowed from the source text.
#[derive(Debug, Clone, PartialEq)]
pub enum Token<'src> {
    Ident(&'src str),
    Number(i64),
    Punct(char),
}

pub struct Lexer<'src> {
    source: &'src str,
    pos: usize,
    keywords: HashMap<&'static str, u8>,
}

impl<'src> Lexer<'src> {
    pub fn new(source: &'src str) -> Self {
        let mut keywords = HashMap::new();
        keywords.insert("fn", 1);
        Lexer { source, pos: 0, keywords }
    }

    /// Next token, or `None` at the end.
    pub fn next_token(&mut self) -> Option<Token<'src>> {
        let rest = &self.source[self.pos..];
        let c = rest.chars().next()?;
        match c {
            '{' | '}' | '(' | ')' => {
                self.pos += 1;
                Some(Token::Punct(c))
            }
            '\'' => None,
            _ => {
                let end = rest.find(|ch: char| !ch.is_alphanumeric()).unwrap_or(rest.len());
                self.pos += end.max(1);
                Some(Token::Ident(&rest[..end]))
            }
        }
    }
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let raw = r#"raw "{" string";
        'outer: for _ in 0..1 {
            break 'outer;
        }
        write!(f, "{:?} {}", self, raw.len())
    }
}
