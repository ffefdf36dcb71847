//! The `kind` of a JSON object told from the object's first members, without reading the rest:
//! kube-apiserver encodes a review's TypeMeta first (`kind`, then `apiVersion`, as the Go
//! struct declares them), so the kind of a large body is known from its first bytes. Only a
//! plain prefix is understood: `{`, then `kind` or `apiVersion` then `kind`, string values
//! without escapes; anything else is "not declared".

/// Whether `prefix` (the first bytes of a body) opens an object whose leading TypeMeta says
/// `kind` is `kind`.
pub fn declares_kind(prefix: &[u8], kind: &str) -> bool {
    let mut s = Scanner { rest: prefix };
    if !s.byte(b'{') {
        return false;
    }
    for member in 0..2 {
        if member > 0 && !s.byte(b',') {
            return false;
        }
        let (Some(key), true) = (s.string(), s.byte(b':')) else {
            return false;
        };
        match key {
            b"kind" => return s.string() == Some(kind.as_bytes()),
            b"apiVersion" if s.string().is_some() => {}
            _ => return false,
        }
    }
    false
}

/// A cursor over JSON bytes that skips whitespace before each token.
struct Scanner<'a> {
    rest: &'a [u8],
}

impl<'a> Scanner<'a> {
    fn skip_space(&mut self) {
        let n = self
            .rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        self.rest = &self.rest[n..];
    }

    /// Consumes `want` (after whitespace) if it is next.
    fn byte(&mut self, want: u8) -> bool {
        self.skip_space();
        match self.rest.split_first() {
            Some((b, rest)) if *b == want => {
                self.rest = rest;
                true
            }
            _ => false,
        }
    }

    /// A string without escapes, its contents.
    fn string(&mut self) -> Option<&'a [u8]> {
        if !self.byte(b'"') {
            return None;
        }
        let end = self.rest.iter().position(|b| matches!(b, b'"' | b'\\'))?;
        if self.rest[end] != b'"' {
            return None;
        }
        let (contents, rest) = self.rest.split_at(end);
        self.rest = &rest[1..];
        Some(contents)
    }
}

#[cfg(test)]
mod tests {
    use super::declares_kind;

    #[test]
    fn the_kind_is_read_from_the_leading_type_meta_only() {
        let k = "AuthorizationConditionsReview";
        for yes in [
            r#"{"kind":"AuthorizationConditionsReview","apiVersion":"x","request":"#,
            r#" { "apiVersion" : "authorization.k8s.io/v1alpha1" ,
               "kind":"AuthorizationConditionsReview""#,
        ] {
            assert!(declares_kind(yes.as_bytes(), k), "{yes}");
        }
        for no in [
            r#"{"kind":"SubjectAccessReview","apiVersion":"x""#,
            r#"{"spec":{},"kind":"AuthorizationConditionsReview"}"#,
            r#"{"kind":"AuthorizationConditions\u0052eview"}"#,
            r#"{"kind":"AuthorizationConditionsRev"#,
            r#"[{"kind":"AuthorizationConditionsReview"}]"#,
            r#"{"apiVersion":"x","apiVersion":"y","kind":"AuthorizationConditionsReview"}"#,
            "",
        ] {
            assert!(!declares_kind(no.as_bytes(), k), "{no}");
        }
    }
}
