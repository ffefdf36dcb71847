//! A request's `fieldSelector` and `labelSelector` query strings, turned into the requirements
//! kube-apiserver's webhook authorizer sends in a SubjectAccessReview: what warrant saw when
//! the request was authorized, rebuilt from an audit event's `requestURI`.
//!
//! The authorization filter (`k8s.io/apiserver/pkg/endpoints/filters/authorization.go`) parses
//! both strings, keeping no requirement at all when parsing fails; the webhook authorizer
//! (`plugin/pkg/authorizer/webhook/webhook.go`) then maps each requirement onto the
//! `authorization.k8s.io/v1` operators (`=`, `==` and `in` become `In`, `!=` and `notin` become
//! `NotIn`, existence keeps its name), drops the ones it cannot express (`>` and `<`), and sends
//! none when nothing is left. The grammars are apimachinery's: `pkg/fields/selector.go` (terms
//! split on unescaped commas, sorted, each split at its first operator, values unescaped) and
//! `pkg/labels/selector.go` (a small lexer and recursive parser, requirements sorted by key,
//! value sets sorted and deduplicated, keys and values validated).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    FieldSelectorRequirement, LabelSelectorRequirement,
};

/// The field selector's requirements as the webhook sends them; `None` when the string does
/// not parse or yields none.
pub(crate) fn field_requirements(raw: &str) -> Option<Vec<FieldSelectorRequirement>> {
    let mut terms = split_terms(raw);
    terms.sort_unstable();
    let mut out = Vec::with_capacity(terms.len());
    for term in terms.into_iter().filter(|t| !t.is_empty()) {
        let (key, op, value) = split_term(term)?;
        let operator = if op == "!=" { "NotIn" } else { "In" };
        out.push(FieldSelectorRequirement {
            key: key.to_owned(),
            operator: operator.to_owned(),
            values: Some(vec![unescape(value)?]),
        });
    }
    (!out.is_empty()).then_some(out)
}

/// Splits at commas not escaped by a backslash (the backslashes stay).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let (mut terms, mut start, mut escaped) = (Vec::new(), 0, false);
    for (i, c) in s.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ',' => {
                terms.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    terms.push(&s[start..]);
    terms
}

/// The key, operator and raw value of a term, split at the first operator (`!=` before `==`
/// before `=` at each position).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        for op in ["!=", "==", "="] {
            if term[i..].starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

/// A field selector value with `\\`, `\,` and `\=` unescaped; any other escape, or a bare `,` or
/// `=`, is an error.
fn unescape(s: &str) -> Option<String> {
    let (mut out, mut escaped) = (String::with_capacity(s.len()), false);
    for c in s.chars() {
        match c {
            '\\' | ',' | '=' if escaped => {
                out.push(c);
                escaped = false;
            }
            _ if escaped => return None,
            '\\' => escaped = true,
            ',' | '=' => return None,
            _ => out.push(c),
        }
    }
    (!escaped).then_some(out)
}

/// The label selector's requirements as the webhook sends them; `None` when the string does
/// not parse or yields none.
pub(crate) fn label_requirements(raw: &str) -> Option<Vec<LabelSelectorRequirement>> {
    let mut parsed = Parser::new(raw)?.parse()?;
    parsed.sort_by(|a, b| a.key.cmp(&b.key));
    let out: Vec<_> = parsed
        .into_iter()
        .filter_map(|r| {
            let operator = match r.op {
                Op::Equals | Op::DoubleEquals | Op::In => "In",
                Op::NotEquals | Op::NotIn => "NotIn",
                Op::Exists => "Exists",
                Op::DoesNotExist => "DoesNotExist",
                Op::GreaterThan | Op::LessThan => return None,
            };
            Some(LabelSelectorRequirement {
                key: r.key,
                operator: operator.to_owned(),
                values: (!r.values.is_empty()).then_some(r.values),
            })
        })
        .collect();
    (!out.is_empty()).then_some(out)
}

/// A label selector operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One parsed label requirement: its values sorted and deduplicated.
#[derive(Debug)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A token of the label selector lexer.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    End,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier(String),
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

fn is_special(b: u8) -> bool {
    matches!(b, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn symbol(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::Not,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

/// The tokens of a selector; `None` on a run of symbols that is no operator.
fn lex(s: &str) -> Option<Vec<Token>> {
    let b = s.as_bytes();
    let (mut i, mut out) = (0, Vec::new());
    loop {
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if i == b.len() {
            out.push(Token::End);
            return Some(out);
        }
        if is_special(b[i]) {
            // The longest run of symbols that still names a token.
            let (mut j, mut last) = (i, None);
            while j < b.len() && is_special(b[j]) {
                match symbol(&b[i..=j]) {
                    Some(t) => last = Some((t, j + 1)),
                    None if last.is_some() => break,
                    None => {}
                }
                j += 1;
            }
            let (token, end) = last?;
            out.push(token);
            i = end;
        } else {
            let start = i;
            while i < b.len() && !is_special(b[i]) && !is_space(b[i]) {
                i += 1;
            }
            out.push(match &s[start..i] {
                "in" => Token::In,
                "notin" => Token::NotIn,
                word => Token::Identifier(word.to_owned()),
            });
        }
    }
}

/// The recursive-descent parser over the tokens. In a value position `in` and `notin` are
/// plain identifiers.
struct Parser {
    tokens: Vec<Token>,
    at: usize,
}

impl Parser {
    fn new(s: &str) -> Option<Self> {
        Some(Self {
            tokens: lex(s)?,
            at: 0,
        })
    }

    fn peek(&self, value: bool) -> Token {
        as_value(
            self.tokens.get(self.at).cloned().unwrap_or(Token::End),
            value,
        )
    }

    fn next(&mut self, value: bool) -> Token {
        let t = self.peek(value);
        self.at += 1;
        t
    }

    fn parse(mut self) -> Option<Vec<Requirement>> {
        let mut out = Vec::new();
        loop {
            match self.peek(true) {
                Token::Identifier(_) | Token::Not => {
                    out.push(self.requirement()?);
                    match self.next(true) {
                        Token::End => return Some(out),
                        Token::Comma => match self.peek(true) {
                            Token::Identifier(_) | Token::Not => {}
                            _ => return None,
                        },
                        _ => return None,
                    }
                }
                Token::End => return Some(out),
                _ => return None,
            }
        }
    }

    fn requirement(&mut self) -> Option<Requirement> {
        let mut negated = false;
        let mut t = self.next(true);
        if t == Token::Not {
            negated = true;
            t = self.next(true);
        }
        let Token::Identifier(key) = t else {
            return None;
        };
        if !label_key(&key) {
            return None;
        }
        let alone = matches!(self.peek(true), Token::End | Token::Comma);
        if negated || alone {
            // `!key` needs nothing after it; a bare `key` is Exists.
            let op = if negated {
                Op::DoesNotExist
            } else {
                Op::Exists
            };
            return Some(Requirement {
                key,
                op,
                values: Vec::new(),
            });
        }
        let op = match self.next(false) {
            Token::In => Op::In,
            Token::Equals => Op::Equals,
            Token::DoubleEquals => Op::DoubleEquals,
            Token::GreaterThan => Op::GreaterThan,
            Token::LessThan => Op::LessThan,
            Token::NotIn => Op::NotIn,
            Token::NotEquals => Op::NotEquals,
            _ => return None,
        };
        let mut values = match op {
            Op::In | Op::NotIn => self.value_set()?,
            _ => self.exact_value()?,
        };
        values.sort_unstable();
        values.dedup();
        let numeric = matches!(op, Op::GreaterThan | Op::LessThan);
        if numeric && values.iter().any(|v| v.parse::<i64>().is_err()) {
            return None;
        }
        if !values.iter().all(|v| label_value(v)) {
            return None;
        }
        Some(Requirement { key, op, values })
    }

    /// `(a,b,...)`; empty members are the empty value, `()` is one empty value.
    fn value_set(&mut self) -> Option<Vec<String>> {
        if self.next(true) != Token::OpenPar {
            return None;
        }
        if self.peek(true) == Token::ClosedPar {
            self.next(true);
            return Some(vec![String::new()]);
        }
        let mut values = Vec::new();
        loop {
            match self.next(true) {
                Token::Identifier(v) => {
                    values.push(v);
                    match self.peek(true) {
                        Token::Comma => {}
                        Token::ClosedPar => break,
                        _ => return None,
                    }
                }
                Token::Comma => {
                    if values.is_empty() {
                        values.push(String::new());
                    }
                    match self.peek(true) {
                        Token::ClosedPar => {
                            values.push(String::new());
                            break;
                        }
                        Token::Comma => values.push(String::new()),
                        _ => {}
                    }
                }
                _ => return None,
            }
        }
        (self.next(true) == Token::ClosedPar).then_some(values)
    }

    /// The one value of `=`, `==`, `!=`, `>`, `<` (empty when the selector ends or goes on).
    fn exact_value(&mut self) -> Option<Vec<String>> {
        match self.peek(true) {
            Token::End | Token::Comma => Some(vec![String::new()]),
            _ => match self.next(true) {
                Token::Identifier(v) => Some(vec![v]),
                _ => None,
            },
        }
    }
}

fn as_value(t: Token, value: bool) -> Token {
    match t {
        Token::In if value => Token::Identifier("in".into()),
        Token::NotIn if value => Token::Identifier("notin".into()),
        t => t,
    }
}

/// `[prefix/]name`: a DNS-1123 subdomain prefix (at most 253), a name of at most 63 characters
/// starting and ending alphanumeric with `-`, `_`, `.` inside.
fn label_key(k: &str) -> bool {
    let (prefix, name) = match k.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, k),
    };
    if name.contains('/') || prefix.is_some_and(|p| !dns_subdomain(p)) {
        return false;
    }
    !name.is_empty() && name.len() <= 63 && qualified(name)
}

/// Empty, or at most 63 characters starting and ending alphanumeric with `-`, `_`, `.` inside.
fn label_value(v: &str) -> bool {
    v.is_empty() || (v.len() <= 63 && qualified(v))
}

fn qualified(s: &str) -> bool {
    let b = s.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.');
    b.first().is_some_and(u8::is_ascii_alphanumeric)
        && b.last().is_some_and(u8::is_ascii_alphanumeric)
        && b.iter().all(inner)
}

fn dns_subdomain(s: &str) -> bool {
    let label = |l: &str| {
        let b = l.as_bytes();
        let ok = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(ok)
            && b.last().is_some_and(ok)
            && b.iter().all(|c| ok(c) || *c == b'-')
    };
    !s.is_empty() && s.len() <= 253 && s.split('.').all(label)
}

#[cfg(test)]
mod tests;
