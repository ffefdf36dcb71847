//! Reading and decoding: bytes to a validated [`Config`], with the source's identity.

use super::error::{ConfigError, ConfigErrors, ErrorKind};
use super::model::Config;
use super::schema;
use super::validate::validate;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;

/// Where a loaded configuration came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The file name as given (or the embedded default's name).
    pub name: Arc<str>,
    /// `sha256:<hex>` of the raw bytes, as kube-apiserver's `last_config_info` reports it.
    pub hash: String,
}

/// A validated configuration and its source.
#[derive(Debug, Clone, PartialEq)]
pub struct Loaded {
    /// The model.
    pub config: Config,
    /// Where it came from.
    pub source: Source,
}

/// `sha256:<hex>` of some bytes.
pub fn content_hash(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(7 + 64);
    s.push_str("sha256:");
    for b in digest {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// Decodes and validates a configuration. `name` names the source in errors.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Loaded, ConfigErrors> {
    let file: Arc<str> = name.into();
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ConfigErrors::one(ConfigError {
            file: file.clone(),
            line: 0,
            path: String::new(),
            kind: ErrorKind::Decode(format!("file is not UTF-8: {e}")),
        })
    })?;
    let decoded = if is_blank(text) {
        // Upstream: an empty file decodes to zero authorizers, which validation refuses.
        Ok(schema::File {
            api_version: None,
            kind: None,
            authorizers: None,
        })
    } else {
        serde_saphyr::from_str_with_options::<schema::File>(text, strict_scalars())
    };
    let decoded = decoded.map_err(|e| {
        let line = e.location().map(|l| l.line() as u32).unwrap_or(0);
        ConfigErrors::one(ConfigError {
            file: file.clone(),
            line,
            path: String::new(),
            kind: ErrorKind::Decode(decode_message(&e)),
        })
    })?;
    let config = validate(&file, decoded)
        .map_err(|errs| ConfigErrors::from_vec(errs).unwrap_or_else(|| unreachable_empty(&file)))?;
    Ok(Loaded {
        config,
        source: Source {
            name: file,
            hash: content_hash(bytes),
        },
    })
}

/// Reads, decodes and validates a configuration file.
pub fn load_file(path: &Path) -> Result<Loaded, ConfigErrors> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| read_error(&name, e))?;
    parse(&name, &bytes)
}

/// The error for a file that cannot be read.
pub(crate) fn read_error(name: &str, e: std::io::Error) -> ConfigErrors {
    ConfigErrors::one(ConfigError {
        file: name.into(),
        line: 0,
        path: String::new(),
        kind: ErrorKind::Read(Arc::new(e)),
    })
}

fn is_blank(text: &str) -> bool {
    text.lines().all(|l| {
        let t = l.trim();
        t.is_empty() || t.starts_with('#') || t == "---"
    })
}

/// The YAML decoding options of a configuration file: scalars keep the type they are written
/// in, as kube-apiserver's strict decoding (YAML to JSON, then a typed JSON decode) keeps them.
/// An unquoted `123` or `true` is refused where a string belongs (`name: 123`, `expression:
/// true`), and a boolean field takes only `true`/`false` (not YAML 1.1's `yes`/`on`, nor a
/// quoted string).
fn strict_scalars() -> serde_saphyr::Options {
    serde_saphyr::options! {
        no_schema: true,
        strict_booleans: true,
    }
}

/// serde-saphyr's message without its source snippet and location suffix; the location is
/// rendered by [`ConfigError`] in the `FILE:LINE:` prefix.
fn decode_message(e: &serde_saphyr::Error) -> String {
    let full = e.without_snippet().to_string();
    let first = full.lines().next().unwrap_or("").trim();
    let message = match first.rfind(" at line ") {
        Some(i) => &first[..i],
        None => first,
    };
    let unquoted = message
        .strip_prefix("The string value [")
        .and_then(|m| m.strip_suffix("] must be quoted"));
    match unquoted {
        Some(v) => format!(
            "{v} is a number or boolean where a string belongs: write it quoted (\"{v}\"), as kube-apiserver's strict decoding requires"
        ),
        None if message.starts_with("invalid boolean") => {
            "invalid boolean: write true or false (kube-apiserver's strict decoding takes no other spelling, quoted or not)".to_owned()
        }
        None => message.to_owned(),
    }
}

fn unreachable_empty(file: &Arc<str>) -> ConfigErrors {
    // `validate` only returns `Err` with at least one error; keep a located answer anyway.
    ConfigErrors::one(ConfigError {
        file: file.clone(),
        line: 0,
        path: String::new(),
        kind: ErrorKind::Decode("invalid configuration".into()),
    })
}
