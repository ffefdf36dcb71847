//! Caller authentication: who may ask warrant for reviews. A caller is authenticated by a
//! client certificate that verified against `--client-ca-file` (checked by rustls during the
//! handshake) or by a bearer token from `--token-auth-file`, in kube-apiserver's static token
//! CSV format (`token,user,uid,"group1,group2"`). Tokens are kept only as SHA-256 digests.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use thiserror::Error;

/// Why a token file could not be read.
#[derive(Debug, Error)]
pub enum TokenFileError {
    /// The file could not be read.
    #[error("cannot read token file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is malformed.
    #[error("{path}:{line}: {what}")]
    Line {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        what: &'static str,
    },
    /// The file has no tokens.
    #[error("token file {0} holds no tokens")]
    Empty(String),
}

/// The identity a token stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenUser {
    /// User name.
    pub name: String,
    /// User UID.
    pub uid: String,
    /// Groups.
    pub groups: Vec<String>,
}

/// Static bearer tokens. `Debug` never prints a token.
#[derive(Clone, Default)]
pub struct TokenAuth {
    by_digest: HashMap<[u8; 32], TokenUser>,
}

impl fmt::Debug for TokenAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TokenAuth({} tokens)", self.by_digest.len())
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Splits one CSV line into fields, honouring double quotes (`""` is a literal quote).
fn csv_fields(line: &str) -> Result<Vec<String>, &'static str> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if cur.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            (c, _) => cur.push(c),
        }
    }
    if quoted {
        return Err("unterminated quoted field");
    }
    fields.push(cur);
    Ok(fields)
}

impl TokenAuth {
    /// Parses a token file's contents. Blank lines and `#` comments are skipped.
    pub fn parse(path: &str, text: &str) -> Result<Self, TokenFileError> {
        let mut by_digest = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let err = |what| TokenFileError::Line {
                path: path.to_owned(),
                line: i + 1,
                what,
            };
            let fields = csv_fields(line).map_err(err)?;
            if fields.len() < 3 {
                return Err(err(
                    "expected at least 3 columns: token,user,uid[,\"group1,group2\"]",
                ));
            }
            if fields[0].is_empty() {
                return Err(err("token is empty"));
            }
            if fields[1].is_empty() {
                return Err(err("user name is empty"));
            }
            let groups = fields
                .get(3)
                .map(|g| {
                    g.split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default();
            let user = TokenUser {
                name: fields[1].clone(),
                uid: fields[2].clone(),
                groups,
            };
            if by_digest.insert(digest(&fields[0]), user).is_some() {
                return Err(err("duplicate token"));
            }
        }
        if by_digest.is_empty() {
            return Err(TokenFileError::Empty(path.to_owned()));
        }
        Ok(Self { by_digest })
    }

    /// Reads a token file.
    pub fn load(path: &Path) -> Result<Self, TokenFileError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| TokenFileError::Read {
            path: name.clone(),
            source,
        })?;
        Self::parse(&name, &text)
    }

    /// The user of a bearer token, if it is known.
    pub fn authenticate(&self, token: &str) -> Option<&TokenUser> {
        self.by_digest.get(&digest(token))
    }
}

/// How callers must prove who they are.
#[derive(Debug, Clone, Default)]
pub struct CallerAuth {
    /// Client certificates verified by the TLS layer count as authenticated.
    pub client_certificates: bool,
    /// Bearer tokens, when a token file is configured.
    pub tokens: Option<TokenAuth>,
}

/// Who a caller turned out to be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// Presented a client certificate that verified.
    Certificate,
    /// Presented a known bearer token.
    Token(String),
    /// Nothing is required of callers (no caller authentication configured).
    Anonymous,
}

impl CallerAuth {
    /// Whether any caller authentication is configured.
    pub(crate) fn is_required(&self) -> bool {
        self.client_certificates || self.tokens.is_some()
    }

    /// Authenticates one request from whether its connection presented a verified client
    /// certificate and its `Authorization` header. `None` means: reject with 401.
    pub fn authenticate(&self, verified_cert: bool, authorization: Option<&str>) -> Option<Caller> {
        if !self.is_required() {
            return Some(Caller::Anonymous);
        }
        if self.client_certificates && verified_cert {
            return Some(Caller::Certificate);
        }
        self.bearer(authorization)
    }

    /// Authenticates a request on the loopback plain-HTTP listener, where no certificate can
    /// be presented: bearer tokens apply when a token file is configured; with client
    /// certificates required and no token file the caller is refused; with no caller
    /// authentication configured at all a local caller is trusted.
    pub(crate) fn authenticate_plain(&self, authorization: Option<&str>) -> Option<Caller> {
        match &self.tokens {
            // Client certificates are required on TLS, and none can be shown here: refuse.
            None if self.client_certificates => None,
            None => Some(Caller::Anonymous),
            Some(_) => self.bearer(authorization),
        }
    }

    fn bearer(&self, authorization: Option<&str>) -> Option<Caller> {
        let tokens = self.tokens.as_ref()?;
        let header = authorization?;
        let (scheme, token) = header.split_once(' ')?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return None;
        }
        tokens
            .authenticate(token.trim())
            .map(|u| Caller::Token(u.name.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kube_apiserver_token_csv() {
        let auth = TokenAuth::parse(
            "tokens.csv",
            "# comment\nsecret1,kube-apiserver,uid-1,\"system:masters,ops\"\nsecret2,bob,uid-2\n",
        )
        .unwrap();
        let u = auth.authenticate("secret1").unwrap();
        assert_eq!(u.name, "kube-apiserver");
        assert_eq!(u.groups, ["system:masters", "ops"]);
        assert_eq!(
            auth.authenticate("secret2").unwrap().groups,
            Vec::<String>::new()
        );
        assert!(auth.authenticate("nope").is_none());
        assert_eq!(format!("{auth:?}"), "TokenAuth(2 tokens)");
    }

    #[test]
    fn rejects_bad_token_files() {
        assert!(matches!(
            TokenAuth::parse("t", "onlytoken\n"),
            Err(TokenFileError::Line { line: 1, .. })
        ));
        assert!(matches!(
            TokenAuth::parse("t", "a,u,1\na,v,2\n"),
            Err(TokenFileError::Line {
                line: 2,
                what: "duplicate token",
                ..
            })
        ));
        assert!(matches!(
            TokenAuth::parse("t", "\n# x\n"),
            Err(TokenFileError::Empty(_))
        ));
    }

    #[test]
    fn bearer_and_certificate_rules() {
        let tokens = TokenAuth::parse("t", "tok,alice,1\n").unwrap();
        let both = CallerAuth {
            client_certificates: true,
            tokens: Some(tokens.clone()),
        };
        assert_eq!(both.authenticate(true, None), Some(Caller::Certificate));
        assert_eq!(
            both.authenticate(false, Some("Bearer tok")),
            Some(Caller::Token("alice".into()))
        );
        assert_eq!(both.authenticate(false, Some("Bearer bad")), None);
        assert_eq!(both.authenticate(false, Some("Basic tok")), None);
        assert_eq!(both.authenticate(false, None), None);
        let certs_only = CallerAuth {
            client_certificates: true,
            tokens: None,
        };
        assert_eq!(certs_only.authenticate(false, Some("Bearer tok")), None);
        assert_eq!(
            CallerAuth::default().authenticate(false, None),
            Some(Caller::Anonymous)
        );
    }
}
