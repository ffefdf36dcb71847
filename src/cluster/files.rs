//! [`FileView`]: the cluster as saved files, for `warrant check --cluster-state DIR`. Every
//! `.yaml`, `.yml` and `.json` file directly in the directory is read (as `kubectl apply -f
//! DIR` reads one), multi-document YAML and `kind: List` items included, into the same
//! [`Index`] the watches feed. Pods count as running by their `status.phase`; an object
//! without `metadata.namespace` is in `default`, as kubectl would create it. Pod security reads
//! the same files: their `SecurityContextConstraints` and the namespaces' pre-allocated values
//! ([`FileView::constraints`], [`FileView::namespaces`]). `DIR` may also be a single file.

use super::crd;
use super::index::{Body, Index};
use super::intern::Interner;
use super::project::{self, Projected};
use super::resource::Resource;
use crate::object::{
    ClusterView, Dependents, LabelValues, ObjectRef, Subject, ViewError, ViewFuture,
};
use crate::pod_security::constraint as scc;
use crate::pod_security::{Namespace as PodNamespace, SecurityContextConstraints};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use thiserror::Error;

/// The largest file read (64 MiB).
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Why saved cluster state could not be loaded.
#[derive(Debug, Error)]
pub enum FilesError {
    /// The directory cannot be listed.
    #[error("cluster state {}: {source}", dir.display())]
    ReadDir {
        /// The directory.
        dir: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file cannot be read.
    #[error("{}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: {size} bytes is more than the {MAX_FILE_BYTES} bytes read", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        size: u64,
    },
    /// A file is not valid YAML or JSON.
    #[error("{}: {message}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the line when known.
        message: String,
    },
    /// A document is not a Kubernetes object warrant can read.
    #[error("{}: {place}: {source}", path.display())]
    Object {
        /// The file.
        path: PathBuf,
        /// `document N`.
        place: String,
        /// What is wrong.
        source: ObjectError,
    },
}

/// Why one document is not a Kubernetes object warrant can read.
#[derive(Debug, Error)]
pub enum ObjectError {
    /// It has no `kind`.
    #[error("not a Kubernetes object: no kind")]
    NoKind,
    /// A list kind without an `items` array.
    #[error("{0} without an items list")]
    ListWithoutItems(String),
    /// An item of a list is itself a list (item number, from 1).
    #[error("item {0}: a list inside a list")]
    NestedList(usize),
    /// An item of a list is no object warrant can read.
    #[error("item {item}: {source}")]
    Item {
        /// Its number, from 1.
        item: usize,
        /// Why.
        source: Box<ObjectError>,
    },
    /// The object does not decode as its kind.
    #[error("{kind}: {source}")]
    Decode {
        /// Its kind.
        kind: String,
        /// serde's error.
        source: serde_json::Error,
    },
    /// The object has no name.
    #[error("{0} without metadata.name")]
    NoName(String),
}

/// Saved cluster state as a [`ClusterView`]: always ready, no live calls.
#[derive(Debug, Default)]
pub struct FileView {
    index: Index,
    /// Objects read, by API group and kind (what `remaining_objects` counts).
    kinds: BTreeMap<(String, String), u64>,
    /// The `SecurityContextConstraints` read.
    constraints: Vec<SecurityContextConstraints>,
    /// Every Namespace read, with its pre-allocated values.
    namespaces: Vec<PodNamespace>,
}

impl FileView {
    /// Reads every `.yaml`, `.yml` and `.json` file in `dir` (not its subdirectories), in
    /// name order; or `dir` itself when it is a file.
    pub fn load(dir: &Path) -> Result<FileView, FilesError> {
        let read_dir = |source| FilesError::ReadDir {
            dir: dir.to_path_buf(),
            source,
        };
        let mut paths = Vec::new();
        if dir.is_file() {
            paths.push(dir.to_path_buf());
        }
        let entries = match dir.is_file() {
            true => Vec::new(),
            false => std::fs::read_dir(dir)
                .map_err(read_dir)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(read_dir)?,
        };
        for entry in entries {
            let path = entry.path();
            let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
            if path.is_file() && matches!(ext, "yaml" | "yml" | "json") {
                paths.push(path);
            }
        }
        paths.sort();
        let mut view = FileView::default();
        let mut interner = Interner::default();
        for path in paths {
            view.read_file(&path, &mut interner)?;
        }
        Ok(view)
    }

    /// The index read from the files.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// The `SecurityContextConstraints` read.
    pub fn constraints(&self) -> &[SecurityContextConstraints] {
        &self.constraints
    }

    /// Every Namespace read, with the values pod security reads.
    pub fn namespaces(&self) -> &[PodNamespace] {
        &self.namespaces
    }

    fn read_file(&mut self, path: &Path, i: &mut Interner) -> Result<(), FilesError> {
        let read = |source| FilesError::Read {
            path: path.to_path_buf(),
            source,
        };
        let size = std::fs::metadata(path).map_err(read)?.len();
        if size > MAX_FILE_BYTES {
            return Err(FilesError::TooLarge {
                path: path.to_path_buf(),
                size,
            });
        }
        let text = std::fs::read_to_string(path).map_err(read)?;
        let documents = decode(path, &text)?;
        for (n, document) in documents.into_iter().enumerate() {
            let place = format!("document {}", n + 1);
            self.read_document(document, i)
                .map_err(|source| FilesError::Object {
                    path: path.to_path_buf(),
                    place,
                    source,
                })?;
        }
        Ok(())
    }

    fn read_document(&mut self, doc: Value, i: &mut Interner) -> Result<(), ObjectError> {
        if doc.is_null() {
            return Ok(());
        }
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind.is_empty() {
            return Err(ObjectError::NoKind);
        }
        if kind == "List" || (kind.ends_with("List") && doc.get("items").is_some()) {
            let Some(Value::Array(items)) = doc.get("items").cloned() else {
                return Err(ObjectError::ListWithoutItems(kind.to_owned()));
            };
            for (m, item) in items.into_iter().enumerate() {
                if item
                    .get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.ends_with("List"))
                {
                    return Err(ObjectError::NestedList(m + 1));
                }
                self.read_document(item, i).map_err(|e| ObjectError::Item {
                    item: m + 1,
                    source: Box::new(e),
                })?;
            }
            return Ok(());
        }
        self.read_object(doc, i)
    }

    fn read_object(&mut self, mut object: Value, i: &mut Interner) -> Result<(), ObjectError> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let group = api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_owned();
        let kind = object
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        *self.kinds.entry((group.clone(), kind.clone())).or_default() += 1;
        if group == scc::GROUP && kind == scc::KIND {
            let constraint = serde_json::from_value::<SecurityContextConstraints>(object)
                .map_err(|source| ObjectError::Decode { kind, source })?;
            if constraint.name().is_empty() {
                return Err(ObjectError::NoName(scc::KIND.to_owned()));
            }
            self.constraints.push(constraint);
            return Ok(());
        }
        if group.is_empty() && kind == "Namespace" {
            let meta = serde_json::from_value::<Meta>(object.clone()).map_err(|source| {
                ObjectError::Decode {
                    kind: kind.clone(),
                    source,
                }
            })?;
            let name = meta.metadata.name.clone().unwrap_or_default();
            let annotations = meta.metadata.annotations.unwrap_or_default();
            self.namespaces
                .push(PodNamespace::from_annotations(name, &annotations));
        }
        let Some(resource) = Resource::from_group_kind(&group, &kind) else {
            return Ok(());
        };
        if resource != Resource::Namespaces {
            default_namespace(&mut object);
        }
        let index = &mut self.index;
        let kind = kind.as_str();
        match resource {
            Resource::Pods => add(index, resource, object, kind, project::pod, i),
            Resource::Services => add(index, resource, object, kind, project::service, i),
            Resource::Ingresses => add(index, resource, object, kind, project::ingress, i),
            Resource::PersistentVolumeClaims => {
                add(index, resource, object, kind, project::claim, i)
            }
            Resource::Namespaces => add(index, resource, object, kind, namespace_meta, i),
            workload => add(index, workload, object, kind, workload_meta, i),
        }
    }
}

/// An object's metadata alone.
#[derive(Debug, Default, Deserialize)]
struct Meta {
    #[serde(default)]
    metadata: ObjectMeta,
}

fn namespace_meta(m: &Meta, i: &mut Interner) -> Option<Projected<super::index::Namespace>> {
    project::namespace(&m.metadata, i)
}

fn workload_meta(m: &Meta, i: &mut Interner) -> Option<Projected<super::index::Workload>> {
    project::workload(&m.metadata, i)
}

/// Puts a namespaced object that names no namespace in `default`.
fn default_namespace(object: &mut Value) {
    if let Some(Value::Object(meta)) = object.get_mut("metadata")
        && meta
            .get("namespace")
            .is_none_or(|n| n.as_str().is_none_or(str::is_empty))
    {
        meta.insert("namespace".into(), Value::String("default".into()));
    }
}

/// Decodes `object` as `W`, projects it and adds it to the index.
fn add<W: DeserializeOwned, B: Body>(
    index: &mut Index,
    resource: Resource,
    object: Value,
    kind: &str,
    project: fn(&W, &mut Interner) -> Option<Projected<B>>,
    i: &mut Interner,
) -> Result<(), ObjectError> {
    let w: W = serde_json::from_value(object).map_err(|source| ObjectError::Decode {
        kind: kind.to_owned(),
        source,
    })?;
    let (key, object) = project(&w, i).ok_or_else(|| ObjectError::NoName(kind.to_owned()))?;
    index.apply(resource, key, object);
    Ok(())
}

/// The documents of a file: JSON for `.json`, multi-document YAML otherwise.
fn decode(path: &Path, text: &str) -> Result<Vec<Value>, FilesError> {
    let err = |message: String| FilesError::Decode {
        path: path.to_path_buf(),
        message,
    };
    if path.extension().and_then(|e| e.to_str()) == Some("json") {
        return serde_json::from_str::<Value>(text)
            .map(|v| vec![v])
            .map_err(|e| err(format!("invalid JSON: {e}")));
    }
    serde_saphyr::from_multiple::<Value>(text).map_err(|e| {
        let full = e.without_snippet().to_string();
        let first = full.lines().next().unwrap_or("").trim().to_owned();
        err(format!("invalid YAML: {first}"))
    })
}

impl ClusterView for FileView {
    fn ready(&self) -> Result<(), ViewError> {
        Ok(())
    }

    fn namespace_label(&self, namespace: &str, key: &str) -> Result<Option<String>, ViewError> {
        Ok(self.index.namespace_label(namespace, key))
    }

    fn labelled_inside(&self, namespace: &str, key: &str) -> Result<LabelValues, ViewError> {
        Ok(self.index.labelled_inside(namespace, key))
    }

    fn dependents(
        &self,
        target: &ObjectRef<'_>,
        object: Option<&Subject>,
    ) -> Result<Dependents, ViewError> {
        Ok(self.index.dependents(target, object))
    }

    fn remaining_objects<'a>(&'a self, crd: &'a Subject) -> ViewFuture<'a, Result<u64, ViewError>> {
        let counted = crd::api_resource(crd)
            .map(|r| self.kinds.get(&(r.group, r.kind)).copied().unwrap_or(0));
        Box::pin(std::future::ready(counted))
    }
}
