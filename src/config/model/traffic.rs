//! The validated `liveTraffic:` block of a `DeletionGuard`: the Prometheus server the validation
//! ring asks for a target's real request rate, the PromQL template of each kind, and the cache
//! and timeout of the answers. Asking is `authorizer::deletion_guard::traffic`.

use super::kind::Kind;
use std::path::PathBuf;
use std::time::Duration;

/// How long an answer is reused unless `cacheTTL` says otherwise.
pub(crate) const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(30);
/// How long one query may take unless `timeout` says otherwise.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_millis(500);

/// A validated `liveTraffic:` block.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LiveTraffic {
    /// The server asked.
    pub prometheus: PrometheusServer,
    /// The template of each kind, in file order (the first covering a target is used).
    pub queries: Vec<TrafficQuery>,
    /// How long an answer is reused.
    pub cache_ttl: Duration,
    /// How long one query may take (also bounded by the admission request's own deadline).
    pub timeout: Duration,
}

impl LiveTraffic {
    /// The template for `group`/`resource`, if any covers it.
    pub(crate) fn query_for(&self, group: &str, resource: &str) -> Option<&QueryTemplate> {
        self.queries
            .iter()
            .find(|q| q.kind.covers(group, resource))
            .map(|q| &q.template)
    }
}

/// A Prometheus server's HTTP API and warrant's credentials for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PrometheusServer {
    /// The base URL (`http://` or `https://`, no query or fragment).
    pub url: String,
    /// The CA bundle verifying an `https://` server (the platform's roots when absent).
    pub ca_file: Option<PathBuf>,
    /// The client certificate and its key.
    pub client_identity: Option<(PathBuf, PathBuf)>,
    /// The file holding a bearer token, read at each query.
    pub bearer_token_file: Option<PathBuf>,
}

/// The query of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrafficQuery {
    /// The kind it covers.
    pub kind: Kind,
    /// Its template.
    pub template: QueryTemplate,
}

/// A PromQL template: text with `${namespace}`, `${name}` and `${label:KEY}` placeholders.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QueryTemplate {
    parts: Vec<Part>,
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Part {
    Text(String),
    Namespace,
    Name,
    Label(String),
}

/// A template that cannot be parsed: the placeholder at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `${` without its `}`.
    #[error("a placeholder opened with ${{ is not closed")]
    Unclosed,
    /// A placeholder warrant does not know.
    #[error(
        "unknown placeholder ${{{0}}}: supported are ${{namespace}}, ${{name}} and ${{label:KEY}}"
    )]
    Unknown(String),
}

/// A label a template names is not on the target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the target has no label {0:?}")]
pub struct MissingLabel(pub String);

impl QueryTemplate {
    /// Parses `text`; `${` opens a placeholder, any other `$` is text.
    pub(crate) fn parse(text: &str) -> Result<Self, TemplateError> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("${") {
            if open > 0 {
                parts.push(Part::Text(rest[..open].to_owned()));
            }
            let after = &rest[open + 2..];
            let close = after.find('}').ok_or(TemplateError::Unclosed)?;
            let inner = &after[..close];
            parts.push(match inner {
                "namespace" => Part::Namespace,
                "name" => Part::Name,
                _ => match inner.strip_prefix("label:") {
                    Some(key) if !key.is_empty() => Part::Label(key.to_owned()),
                    _ => return Err(TemplateError::Unknown(inner.to_owned())),
                },
            });
            rest = &after[close + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Text(rest.to_owned()));
        }
        Ok(Self { parts })
    }

    /// The label keys the template names.
    pub(crate) fn label_keys(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Label(k) => Some(k.as_str()),
            _ => None,
        })
    }

    /// The query for one target, each value escaped for a PromQL double-quoted string;
    /// `labels` reads the target's labels.
    pub(crate) fn render<'a>(
        &self,
        namespace: &str,
        name: &str,
        labels: impl Fn(&str) -> Option<&'a str>,
    ) -> Result<String, MissingLabel> {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                Part::Text(t) => out.push_str(t),
                Part::Namespace => escape_into(&mut out, namespace),
                Part::Name => escape_into(&mut out, name),
                Part::Label(k) => {
                    let v = labels(k).ok_or_else(|| MissingLabel(k.clone()))?;
                    escape_into(&mut out, v);
                }
            }
        }
        Ok(out)
    }
}

/// `value` as the inside of a PromQL double-quoted string (Go's escapes for `\`, `"` and
/// control characters).
fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_render_the_targets_names_and_labels_escaped() {
        let t = QueryTemplate::parse(
            r#"sum(rate(http_requests_total{namespace="${namespace}",service="${name}",app="${label:app}"}[1m])) + $x"#,
        )
        .unwrap();
        assert_eq!(t.label_keys().collect::<Vec<_>>(), ["app"]);
        let q = t
            .render("shop", "we\"b", |k| (k == "app").then_some("a\\b"))
            .unwrap();
        assert_eq!(
            q,
            r#"sum(rate(http_requests_total{namespace="shop",service="we\"b",app="a\\b"}[1m])) + $x"#
        );
        assert_eq!(
            t.render("shop", "web", |_| None),
            Err(MissingLabel("app".into()))
        );
    }

    #[test]
    fn unknown_and_unclosed_placeholders_are_refused() {
        assert_eq!(
            QueryTemplate::parse("up{job=\"${job}\"}"),
            Err(TemplateError::Unknown("job".into()))
        );
        assert_eq!(
            QueryTemplate::parse("up{job=\"${label:}\"}"),
            Err(TemplateError::Unknown("label:".into()))
        );
        assert_eq!(
            QueryTemplate::parse("up{job=\"${name\"}"),
            Err(TemplateError::Unknown("name\"".into()))
        );
        assert_eq!(
            QueryTemplate::parse("up{job=\"${name"),
            Err(TemplateError::Unclosed)
        );
    }
}
