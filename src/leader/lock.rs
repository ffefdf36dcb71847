//! [`LeaseLock`]: the election's reads and writes of its Lease, as client-go's
//! `resourcelock.LeaseLock`: an update replaces the Lease last read or written, so its
//! `resourceVersion` makes the write optimistic (a concurrent writer turns it into a 409).

use super::record::ElectionRecord;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ObjectMeta, PostParams};
use thiserror::Error;

/// A failed read or write of the Lease.
#[derive(Debug, Error)]
pub enum LockError {
    /// The API server refused or could not be reached.
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: String,
        /// The client's error.
        #[source]
        source: kube::Error,
    },
    /// An update before any read or create (a bug of the caller).
    #[error("lease {0}: update before get or create")]
    NotRead(String),
}

/// The Lease the election runs on.
#[derive(Debug, Clone)]
pub struct LeaseLock {
    api: Api<Lease>,
    namespace: String,
    name: String,
    last: Option<Lease>,
}

impl LeaseLock {
    /// The Lease `namespace/name` through `client`.
    pub fn new(client: kube::Client, namespace: &str, name: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            last: None,
        }
    }

    /// `namespace/name`, for logs.
    pub(crate) fn describe(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// The current record and its `resourceVersion`, or `None` when the Lease does not exist.
    pub async fn get(&mut self) -> Result<Option<(ElectionRecord, String)>, LockError> {
        let lease = self
            .api
            .get_opt(&self.name)
            .await
            .map_err(|e| self.err(e))?;
        let Some(lease) = lease else {
            return Ok(None);
        };
        let record = ElectionRecord::from_spec(lease.spec.as_ref());
        let version = lease.metadata.resource_version.clone().unwrap_or_default();
        self.last = Some(lease);
        Ok(Some((record, version)))
    }

    /// Creates the Lease holding `record` (a 409 when another replica created it first).
    pub async fn create(&mut self, record: &ElectionRecord) -> Result<(), LockError> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                namespace: Some(self.namespace.clone()),
                ..ObjectMeta::default()
            },
            spec: Some(record.to_spec()),
        };
        let created = self
            .api
            .create(&PostParams::default(), &lease)
            .await
            .map_err(|e| self.err(e))?;
        self.last = Some(created);
        Ok(())
    }

    /// Writes `record` over the Lease last read or written, at its `resourceVersion`.
    pub async fn update(&mut self, record: &ElectionRecord) -> Result<(), LockError> {
        let mut lease = self
            .last
            .clone()
            .ok_or_else(|| LockError::NotRead(self.describe()))?;
        lease.spec = Some(record.to_spec());
        let written = self
            .api
            .replace(&self.name, &PostParams::default(), &lease)
            .await
            .map_err(|e| self.err(e))?;
        self.last = Some(written);
        Ok(())
    }

    /// The `resourceVersion` of the Lease last read or written (empty before either).
    pub fn version(&self) -> String {
        self.last
            .as_ref()
            .and_then(|l| l.metadata.resource_version.clone())
            .unwrap_or_default()
    }

    fn err(&self, source: kube::Error) -> LockError {
        LockError::Api {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            source,
        }
    }
}
