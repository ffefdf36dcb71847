//! The taken blocks, kept in a `coordination.k8s.io/v1` Lease in warrant's namespace (the
//! stand-in for OpenShift's `RangeAllocation`; the module documentation of
//! [`crate::namespace_ranges`] says why). The Lease's annotations hold the range the bitmap was
//! made for ([`RANGE_ANNOTATION`]) and the bitmap ([`BLOCKS_ANNOTATION`], as
//! [`Ledger::encode`] writes it). Every write is at the `resourceVersion` read (or a create),
//! so a lost race is a conflict, never a silent overwrite.

use crate::pod_security::allocation::{Ledger, LedgerError, UidRange};
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ObjectMeta, PostParams};
use std::collections::BTreeMap;
use thiserror::Error;

/// The Lease's name.
pub const LEDGER_NAME: &str = "warrant-scc-uid-ranges";
/// The annotation holding the uid range the bitmap was made for.
pub const RANGE_ANNOTATION: &str = "warrant.dev/scc-uid-range";
/// The annotation holding the bitmap of taken blocks.
pub const BLOCKS_ANNOTATION: &str = "warrant.dev/scc-uid-blocks";

/// Why the Lease could not be read or written.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The API server refused or could not be reached.
    #[error("lease {namespace}/{name}: {source}")]
    Api {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: &'static str,
        /// The cause.
        #[source]
        source: kube::Error,
    },
    /// The Lease holds a bitmap that cannot be read for the configured range.
    #[error("lease {namespace}/{name}: {source}")]
    Ledger {
        /// The Lease's namespace.
        namespace: String,
        /// The Lease's name.
        name: &'static str,
        /// The cause.
        #[source]
        source: LedgerError,
    },
}

/// What was read: the Lease (absent before the first write) and its ledger.
#[derive(Debug, Clone)]
pub struct Stored {
    lease: Option<Lease>,
    /// The taken blocks it records.
    pub ledger: Ledger,
}

/// The Lease of taken blocks.
#[derive(Debug, Clone)]
pub struct LedgerStore {
    api: Api<Lease>,
    namespace: String,
}

impl LedgerStore {
    /// The Lease in `namespace` through `client`.
    pub fn new(client: kube::Client, namespace: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            namespace: namespace.to_owned(),
        }
    }

    fn api_error(&self, source: kube::Error) -> StoreError {
        StoreError::Api {
            namespace: self.namespace.clone(),
            name: LEDGER_NAME,
            source,
        }
    }

    /// Reads the Lease. `strict`: a bitmap of another range (or unreadable) is an error, as
    /// OpenShift's `allocate` refuses a `RangeAllocation` of another range; otherwise (a
    /// repair, which rewrites it) it reads as nothing taken.
    pub async fn read(&self, range: UidRange, strict: bool) -> Result<Stored, StoreError> {
        let lease = self
            .api
            .get_opt(LEDGER_NAME)
            .await
            .map_err(|e| self.api_error(e))?;
        let ledger = match &lease {
            None => Ledger::new(range),
            Some(lease) => match decode(range, lease) {
                Ok(ledger) => ledger,
                Err(source) if strict => {
                    return Err(StoreError::Ledger {
                        namespace: self.namespace.clone(),
                        name: LEDGER_NAME,
                        source,
                    });
                }
                Err(_) => Ledger::new(range),
            },
        };
        Ok(Stored { lease, ledger })
    }

    /// Writes `ledger` over what `read` returned: `Ok(true)` when written, `Ok(false)` when
    /// another writer changed the Lease in between (read again).
    pub async fn write(&self, read: &Stored, ledger: &Ledger) -> Result<bool, StoreError> {
        let lease = with_ledger(read.lease.clone(), ledger);
        let written = if lease.metadata.resource_version.is_some() {
            self.api
                .replace(LEDGER_NAME, &PostParams::default(), &lease)
                .await
        } else {
            self.api.create(&PostParams::default(), &lease).await
        };
        match written {
            Ok(_) => Ok(true),
            Err(kube::Error::Api(s)) if s.is_conflict() || s.is_already_exists() => Ok(false),
            Err(e) => Err(self.api_error(e)),
        }
    }
}

/// The ledger a Lease records for `range` (nothing taken when it has no bitmap yet).
pub fn decode(range: UidRange, lease: &Lease) -> Result<Ledger, LedgerError> {
    let annotations = lease.metadata.annotations.as_ref();
    let get = |key: &str| annotations.and_then(|a| a.get(key));
    match (get(RANGE_ANNOTATION), get(BLOCKS_ANNOTATION)) {
        (Some(text), Some(data)) => Ledger::decode(range, text, data),
        (Some(text), None) => Ledger::decode(range, text, ""),
        _ => Ok(Ledger::new(range)),
    }
}

/// `lease` (or a new one) recording `ledger`; its `resourceVersion` is kept for the write.
pub fn with_ledger(lease: Option<Lease>, ledger: &Ledger) -> Lease {
    let mut lease = lease.unwrap_or_else(|| Lease {
        metadata: ObjectMeta {
            name: Some(LEDGER_NAME.to_owned()),
            labels: Some(BTreeMap::from([(
                "app.kubernetes.io/managed-by".to_owned(),
                "warrant".to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        spec: None,
    });
    let annotations = lease.metadata.annotations.get_or_insert_default();
    annotations.insert(RANGE_ANNOTATION.to_owned(), ledger.range().to_string());
    annotations.insert(BLOCKS_ANNOTATION.to_owned(), ledger.encode());
    lease
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_written_reads_back_the_same_blocks() {
        let range = UidRange::parse("0-999/10").unwrap();
        let mut ledger = Ledger::new(range);
        ledger.take(3);
        ledger.take(99);
        let lease = with_ledger(None, &ledger);
        assert_eq!(lease.metadata.name.as_deref(), Some(LEDGER_NAME));
        assert_eq!(decode(range, &lease).unwrap(), ledger);
        let rewritten = with_ledger(Some(lease), &Ledger::new(range));
        assert_eq!(decode(range, &rewritten).unwrap().taken(), 0);
    }

    #[test]
    fn a_lease_without_a_bitmap_has_nothing_taken_and_another_range_is_refused() {
        let range = UidRange::parse("0-999/10").unwrap();
        assert_eq!(decode(range, &Lease::default()).unwrap().taken(), 0);
        let other = with_ledger(None, &Ledger::new(UidRange::parse("0-99/10").unwrap()));
        assert!(matches!(
            decode(range, &other),
            Err(LedgerError::OtherRange { .. })
        ));
    }
}
