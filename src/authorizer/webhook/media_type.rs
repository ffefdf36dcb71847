//! Go's `mime.ParseMediaType`, which client-go applies to the `Content-Type` of every answer
//! before it looks at the status code (`k8s.io/client-go/rest/request.go`,
//! `transformResponse`). What it accepts decides whether a downstream answer is read at all:
//!
//! - no `Content-Type` (or an empty one): the client's own content type is assumed, and the
//!   webhook client sets `application/json` (`k8s.io/apiserver/pkg/util/webhook/webhook.go`);
//! - any parseable media type, `text/html` and a bare `json` included: decoded as JSON, since the
//!   webhook client's one serializer has no media type and so matches any;
//! - anything else: an `InternalError` (`errors.NewInternalError` of the parse error), which
//!   upstream's `DefaultShouldRetry` retries.
//!
//! The grammar is Go's (`mime/mediatype.go`, `mime/grammar.go`): a token, optionally `/` and
//! a second token, then `; name=value` parameters whose values are tokens or quoted strings;
//! trailing `;` is allowed, a repeated parameter with another value is not. Only the verdict and
//! the media type are kept; parameter values are not needed.

use thiserror::Error;

/// Why a `Content-Type` is not a media type, worded as Go's `mime` package words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum MediaTypeError {
    /// Nothing before the first `;` is a token.
    #[error("mime: no media type")]
    NoMediaType,
    /// The type is followed by something other than `/`.
    #[error("mime: expected slash after first token")]
    NoSlash,
    /// Nothing after the `/` is a token.
    #[error("mime: expected token after slash")]
    NoSubtype,
    /// The subtype is followed by something other than a parameter.
    #[error("mime: unexpected content after media subtype")]
    TrailingContent,
    /// A parameter is not `name=value`.
    #[error("mime: invalid media parameter")]
    InvalidParameter,
    /// A parameter is repeated with another value.
    #[error("mime: duplicate parameter name")]
    DuplicateParameter,
}

/// Go's `isTokenChar`: printable ASCII other than space and the RFC 2045 tspecials.
fn is_token_char(c: char) -> bool {
    c.is_ascii_graphic() && !"()<>@,;:\\\"/[]?=".contains(c)
}

/// Go's `isTSpecial`.
fn is_tspecial(c: char) -> bool {
    "()<>@,;:\\\"/[]?=".contains(c)
}

/// The leading token of `s` and the rest.
fn token(s: &str) -> (&str, &str) {
    let end = s.find(|c| !is_token_char(c)).unwrap_or(s.len());
    s.split_at(end)
}

/// A token or a quoted string (unescaped) and the rest; `None` when neither is there.
fn value(s: &str) -> Option<(String, &str)> {
    if !s.starts_with('"') {
        let (t, rest) = token(s);
        return (!t.is_empty()).then(|| (t.to_owned(), rest));
    }
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, &s[i + 1..])),
            // An escape only of a tspecial; any other backslash is literal (Go's MSIE rule).
            '\\' if chars.peek().is_some_and(|&(_, n)| is_tspecial(n)) => {
                if let Some((_, n)) = chars.next() {
                    out.push(n);
                }
            }
            '\r' | '\n' => return None,
            c => out.push(c),
        }
    }
    None
}

/// One `; name=value` parameter: its lower-case name, value and the rest.
fn parameter(s: &str) -> Option<(String, String, &str)> {
    let rest = s.trim_start().strip_prefix(';')?.trim_start();
    let (name, rest) = token(rest);
    if name.is_empty() {
        return None;
    }
    let rest = rest.trim_start().strip_prefix('=')?.trim_start();
    let (value, rest) = value(rest)?;
    Some((name.to_lowercase(), value, rest))
}

/// Go's `checkMediaTypeDisposition`: `type` or `type/subtype`, nothing else.
fn check_type(media: &str) -> Result<(), MediaTypeError> {
    let (typ, rest) = token(media);
    if typ.is_empty() {
        return Err(MediaTypeError::NoMediaType);
    }
    if rest.is_empty() {
        return Ok(());
    }
    let rest = rest.strip_prefix('/').ok_or(MediaTypeError::NoSlash)?;
    let (subtype, rest) = token(rest);
    if subtype.is_empty() {
        return Err(MediaTypeError::NoSubtype);
    }
    if !rest.is_empty() {
        return Err(MediaTypeError::TrailingContent);
    }
    Ok(())
}

/// Parses a `Content-Type` as Go's `mime.ParseMediaType` does; returns the media type in lower
/// case without parameters.
pub fn parse(content_type: &str) -> Result<String, MediaTypeError> {
    let base = content_type.split(';').next().unwrap_or_default();
    let media = base.to_lowercase().trim().to_owned();
    check_type(&media)?;
    let mut seen: Vec<(String, String)> = Vec::new();
    let mut rest = &content_type[base.len()..];
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            break;
        }
        let Some((name, value, after)) = parameter(rest) else {
            if rest.trim() == ";" {
                break;
            }
            return Err(MediaTypeError::InvalidParameter);
        };
        match seen.iter().find(|(n, _)| *n == name) {
            Some((_, v)) if *v != value => return Err(MediaTypeError::DuplicateParameter),
            Some(_) => {}
            None => seen.push((name, value)),
        }
        rest = after;
    }
    Ok(media)
}

#[cfg(test)]
mod tests {
    use super::{MediaTypeError as E, parse};

    /// Verdicts of Go 1.26's `mime.ParseMediaType` on the same inputs.
    #[test]
    fn agrees_with_go() {
        let ok = [
            ("application/json", "application/json"),
            ("Application/JSON; charset=UTF-8", "application/json"),
            ("  text/html ; charset=\"utf-8\"", "text/html"),
            ("json", "json"),
            ("application/json;", "application/json"),
            ("application/json; charset=utf-8;", "application/json"),
            ("application/json; a=1; a=1", "application/json"),
            ("text/plain; name=\"a\\\"b\"", "text/plain"),
            ("text/plain; name*=utf-8''x", "text/plain"),
        ];
        for (input, want) in ok {
            assert_eq!(parse(input).as_deref(), Ok(want), "{input:?}");
        }
        let bad = [
            ("", E::NoMediaType),
            ("   ", E::NoMediaType),
            (";charset=utf-8", E::NoMediaType),
            ("/json", E::NoMediaType),
            ("application json", E::NoSlash),
            ("application/", E::NoSubtype),
            ("application/json/x", E::TrailingContent),
            ("application/json charset", E::TrailingContent),
            ("application/json; charset", E::InvalidParameter),
            ("application/json; charset=", E::InvalidParameter),
            ("application/json; charset=\"utf-8", E::InvalidParameter),
            ("application/json; =utf-8", E::InvalidParameter),
            ("application/json;;", E::InvalidParameter),
            ("application/json; a=1; a=2", E::DuplicateParameter),
            ("application/json; A=1; a=2", E::DuplicateParameter),
            ("applicätion/json", E::NoSlash),
        ];
        for (input, want) in bad {
            assert_eq!(parse(input), Err(want), "{input:?}");
        }
    }
}
