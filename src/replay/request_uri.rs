//! An audit event's `requestURI` (the escaped path and query of the request, as
//! `k8s.io/apiserver/pkg/audit/request.go` records it): its decoded path, its query parameters,
//! and the parts of a resource path that kube-apiserver's request-info factory
//! (`pkg/endpoints/request/requestinfo.go`) reads from it.
//!
//! Replay needs the path itself for two things the audit event does not say as the authorizer
//! saw it: a create's name and namespace (the audit layer fills `objectRef` in from the created
//! object afterwards, while the authorizer saw only the URL), and whether a list or watch named
//! its verb in the path (`/api/v1/watch/...`, where selectors are not authorized).

/// An escaped request URI split into its decoded path and its raw query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestUri<'a> {
    /// The path, percent-decoded.
    pub path: String,
    /// The query after `?`, still escaped ("" when absent).
    pub query: &'a str,
}

impl<'a> RequestUri<'a> {
    /// Splits `uri` at its first `?` (a fragment cannot occur in a request URI).
    pub fn parse(uri: &'a str) -> Self {
        let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
        Self {
            path: percent_decode(path, false),
            query,
        }
    }

    /// The first value of query parameter `key`, decoded as Go's `url.ParseQuery` decodes it
    /// (`+` is a space).
    pub(crate) fn param(&self, key: &str) -> Option<String> {
        self.query
            .split('&')
            .filter(|kv| !kv.is_empty())
            .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
            .find(|(k, _)| percent_decode(k, true) == key)
            .map(|(_, v)| percent_decode(v, true))
    }
}

/// `%XX` decoded (and `+` as a space in a query); a malformed escape is kept as written.
fn percent_decode(s: &str, plus_is_space: bool) -> String {
    if !s.contains(['%', '+']) {
        return s.to_owned();
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' if plus_is_space => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a resource path says, as the request-info factory reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ResourcePath<'a> {
    /// The namespace (`/namespaces/NS/...`; for the namespaces resource itself, the name).
    pub namespace: &'a str,
    /// The resource.
    pub resource: &'a str,
    /// The object name, when the path has one.
    pub name: &'a str,
    /// The subresource, when the path has one.
    pub subresource: &'a str,
    /// The verb came from the path (`/watch/`, `/proxy/`): selectors are not authorized then.
    pub(crate) verb_in_path: bool,
}

/// The resource parts of a decoded path, or `None` when kube-apiserver treats it as a
/// non-resource path (or cannot read it).
pub(crate) fn resource_path(path: &str) -> Option<ResourcePath<'_>> {
    let trimmed = path.trim_matches('/');
    let parts: Vec<&str> = if trimmed.is_empty() {
        Vec::new()
    } else {
        trimmed.split('/').collect()
    };
    if parts.len() < 3 || !matches!(parts[0], "api" | "apis") {
        return None;
    }
    // `/apis/GROUP/VERSION/...` needs four parts; `/api/VERSION/...` has no group.
    let mut rest = &parts[1..];
    if parts[0] == "apis" {
        if rest.len() < 3 {
            return None;
        }
        rest = &rest[1..];
    }
    rest = &rest[1..];
    let mut info = ResourcePath::default();
    let proxy = rest[0] == "proxy";
    if proxy || rest[0] == "watch" {
        if rest.len() < 2 {
            return None;
        }
        info.verb_in_path = true;
        rest = &rest[1..];
    }
    if rest[0] == "namespaces" && rest.len() > 1 {
        info.namespace = rest[1];
        // A namespace's own subresources (status, finalize) stay with the namespaces resource.
        if rest.len() > 2 && !matches!(rest[2], "status" | "finalize") {
            rest = &rest[2..];
        }
    }
    info.resource = rest[0];
    if rest.len() >= 2 {
        info.name = rest[1];
    }
    if rest.len() >= 3 && !proxy {
        info.subresource = rest[2];
    }
    Some(info)
}

#[cfg(test)]
mod tests;
