//! Reading replay inputs: files, directories (their files, in name order) and `-` (standard
//! input). Each file's format is told from its first line: a JSON object on one line makes it a
//! JSON-lines log (warrant's audit records, kube-apiserver audit events, or one
//! SubjectAccessReview per line); anything else is read as one JSON document (a
//! SubjectAccessReview, a JSON array of reviews or events, or an `EventList`). Lines are read
//! within [`MAX_LINE_BYTES`] and documents within [`MAX_DOCUMENT_BYTES`]; a longer one is an
//! error of that line, not an allocation.

use super::apiserver::{self, Seen};
use super::record::{Item, Origin};
use super::{sar, warrant_log};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use thiserror::Error;

/// The longest line read (an audit event at level RequestResponse may carry whole objects).
pub(crate) const MAX_LINE_BYTES: u64 = 4 * 1024 * 1024;

/// The largest JSON document read whole.
pub(crate) const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// An input that cannot be read at all.
#[derive(Debug, Error)]
#[error("{}: {source}", path.display())]
pub struct InputError {
    /// The input as named.
    pub path: PathBuf,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

/// A line or document that is no review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// Where.
    pub(crate) origin: Origin,
    /// What is wrong.
    pub message: String,
}

/// The formats of a JSON-lines file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Warrant,
    ApiServer,
    SubjectAccessReview,
}

impl Format {
    fn of(v: &serde_json::Value) -> Option<Self> {
        if apiserver::looks_like(v) {
            Some(Format::ApiServer)
        } else if warrant_log::looks_like(v) {
            Some(Format::Warrant)
        } else if sar::looks_like(v) {
            Some(Format::SubjectAccessReview)
        } else {
            None
        }
    }
}

/// One open input.
struct Open {
    name: Arc<str>,
    reader: Box<dyn BufRead>,
    line: u64,
    format: Option<Format>,
}

/// The items of every input, in order: a review, a skipped item, or the error of one line.
pub struct Reader {
    pending: VecDeque<PathBuf>,
    current: Option<Open>,
    queued: VecDeque<Result<Item, LineError>>,
    seen: Seen,
    buf: Vec<u8>,
}

impl Reader {
    /// A reader over `inputs`, directories expanded now (so a missing input fails at once).
    pub fn new(inputs: &[PathBuf]) -> Result<Self, InputError> {
        let mut pending = VecDeque::new();
        for input in inputs {
            if input.as_os_str() != "-" && input.is_dir() {
                pending.extend(dir_files(input)?);
            } else if input.as_os_str() != "-" && !input.exists() {
                return Err(InputError {
                    path: input.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
                });
            } else {
                pending.push_back(input.clone());
            }
        }
        Ok(Self {
            pending,
            current: None,
            queued: VecDeque::new(),
            seen: Seen::default(),
            buf: Vec::with_capacity(4096),
        })
    }

    /// The next item, `Err` for an input that stopped being readable.
    pub fn next_item(&mut self) -> Option<Result<Result<Item, LineError>, InputError>> {
        loop {
            if let Some(q) = self.queued.pop_front() {
                return Some(Ok(q));
            }
            if self.current.is_none() {
                let path = self.pending.pop_front()?;
                match open(&path) {
                    Ok(o) => self.current = Some(o),
                    Err(e) => return Some(Err(e)),
                }
            }
            match self.step() {
                Ok(true) => {}
                Ok(false) => self.current = None,
                Err(e) => {
                    self.current = None;
                    return Some(Err(e));
                }
            }
        }
    }

    /// Reads one line (or a whole document) of the current input into the queue; false at its
    /// end.
    fn step(&mut self) -> Result<bool, InputError> {
        let Some(open) = self.current.as_mut() else {
            return Ok(false);
        };
        let io = |source| InputError {
            path: PathBuf::from(&*open.name),
            source,
        };
        self.buf.clear();
        let n = (&mut open.reader)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut self.buf)
            .map_err(io)?;
        if n == 0 {
            return Ok(false);
        }
        open.line += 1;
        let origin = Origin {
            file: open.name.clone(),
            line: open.line,
        };
        if self.buf.len() as u64 > MAX_LINE_BYTES && !self.buf.ends_with(b"\n") {
            skip_rest_of_line(&mut open.reader).map_err(io)?;
            self.queued.push_back(Err(LineError {
                origin,
                message: format!("line longer than {MAX_LINE_BYTES} bytes"),
            }));
            return Ok(true);
        }
        let line = trim(&self.buf);
        if line.is_empty() {
            return Ok(true);
        }
        let format = match open.format {
            Some(f) => f,
            None => match serde_json::from_slice::<serde_json::Value>(line) {
                Ok(v) if !is_collection(&v) => match Format::of(&v) {
                    Some(f) => {
                        open.format = Some(f);
                        f
                    }
                    None => {
                        self.queued.push_back(Err(unknown(origin)));
                        return Ok(false);
                    }
                },
                // Not one review per line: the file is one document.
                _ => {
                    let mut doc = std::mem::take(&mut self.buf);
                    (&mut open.reader)
                        .take(MAX_DOCUMENT_BYTES + 1 - doc.len() as u64)
                        .read_to_end(&mut doc)
                        .map_err(io)?;
                    if doc.len() as u64 > MAX_DOCUMENT_BYTES {
                        self.queued.push_back(Err(LineError {
                            origin,
                            message: format!(
                                "a JSON document larger than {MAX_DOCUMENT_BYTES} bytes; write one review per line"
                            ),
                        }));
                    } else {
                        self.document(&doc, origin);
                    }
                    return Ok(false);
                }
            },
        };
        let item = match format {
            Format::Warrant => warrant_log::read(line, origin.clone()),
            Format::ApiServer => apiserver::read(line, origin.clone(), &mut self.seen),
            Format::SubjectAccessReview => sar::read(line, origin.clone()),
        };
        self.queued.push_back(item.map_err(|e| LineError {
            origin,
            message: e.to_string(),
        }));
        Ok(true)
    }

    /// A whole JSON document: one review, an array of them, or a list with `items`.
    fn document(&mut self, doc: &[u8], origin: Origin) {
        let value: serde_json::Value = match serde_json::from_slice(doc) {
            Ok(v) => v,
            Err(e) => {
                self.queued.push_back(Err(LineError {
                    origin,
                    message: format!("neither JSON lines nor a JSON document: {e}"),
                }));
                return;
            }
        };
        let items = match value {
            serde_json::Value::Array(items) => items,
            serde_json::Value::Object(mut o) if o.get("items").is_some_and(|i| i.is_array()) => {
                match o.remove("items") {
                    Some(serde_json::Value::Array(items)) => items,
                    _ => Vec::new(),
                }
            }
            v => vec![v],
        };
        for v in items {
            let bytes = serde_json::to_vec(&v).unwrap_or_default();
            let item = match Format::of(&v) {
                Some(Format::Warrant) => warrant_log::read(&bytes, origin.clone()),
                Some(Format::ApiServer) => apiserver::read(&bytes, origin.clone(), &mut self.seen),
                Some(Format::SubjectAccessReview) => sar::read(&bytes, origin.clone()),
                None => {
                    self.queued.push_back(Err(unknown(origin.clone())));
                    continue;
                }
            };
            self.queued.push_back(item.map_err(|e| LineError {
                origin: origin.clone(),
                message: e.to_string(),
            }));
        }
    }
}

/// A JSON array, or a list with `items`: a document of several reviews.
fn is_collection(v: &serde_json::Value) -> bool {
    v.is_array() || v.get("items").is_some_and(|i| i.is_array())
}

fn unknown(origin: Origin) -> LineError {
    LineError {
        origin,
        message: "not a warrant audit record, an audit.k8s.io/v1 Event or a SubjectAccessReview; the rest of the file is skipped".into(),
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end]
}

fn skip_rest_of_line(r: &mut dyn BufRead) -> std::io::Result<()> {
    loop {
        let buf = r.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(i) = buf.iter().position(|&c| c == b'\n') {
            r.consume(i + 1);
            return Ok(());
        }
        let n = buf.len();
        r.consume(n);
    }
}

fn open(path: &Path) -> Result<Open, InputError> {
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(BufReader::with_capacity(256 * 1024, std::io::stdin()))
    } else {
        let f = File::open(path).map_err(|source| InputError {
            path: path.to_path_buf(),
            source,
        })?;
        Box::new(BufReader::with_capacity(256 * 1024, f))
    };
    Ok(Open {
        name: path.display().to_string().into(),
        reader,
        line: 0,
        format: None,
    })
}

/// The files of a directory (not hidden, not recursive), in name order.
fn dir_files(dir: &Path) -> Result<Vec<PathBuf>, InputError> {
    let err = |source| InputError {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if !hidden && entry.file_type().map_err(err)?.is_file() {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}
