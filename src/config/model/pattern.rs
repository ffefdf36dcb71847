//! Name patterns: exact names or `*` wildcards (`prod-*`, `*-db`, `*`), as the deletion guard's
//! settings and its change tickets name namespaces, objects and users.

/// A compiled name pattern.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pattern(String);

impl Pattern {
    /// A pattern from its text.
    pub fn new(s: &str) -> Self {
        Self(s.to_owned())
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        glob(self.0.as_bytes(), name.as_bytes())
    }
}

/// Whether any pattern matches.
pub fn any(patterns: &[Pattern], name: &str) -> bool {
    patterns.iter().any(|p| p.matches(name))
}

fn glob(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while si < s.len() {
        if pi < p.len() && p[pi] != b'*' && p[pi] == s[si] {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some(pi);
            mark = si;
            pi += 1;
        } else if let Some(st) = star {
            pi = st + 1;
            mark += 1;
            si = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::Pattern;

    #[test]
    fn wildcards() {
        assert!(Pattern::new("prod-*").matches("prod-eu"));
        assert!(!Pattern::new("prod-*").matches("staging"));
        assert!(Pattern::new("*").matches(""));
        assert!(Pattern::new("a*c").matches("abbc"));
        assert!(Pattern::new("web").matches("web"));
        assert!(!Pattern::new("web").matches("web-1"));
    }
}
