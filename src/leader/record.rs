//! The election record (client-go's `resourcelock.LeaderElectionRecord`) and its Lease form:
//! `holderIdentity`, `leaseDurationSeconds`, `acquireTime`, `renewTime`, `leaseTransitions`,
//! mapped field for field as client-go's `resourcelock/leaselock.go` maps them.

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// Who holds the election and since when.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ElectionRecord {
    /// The holder's identity; empty once released.
    pub(crate) holder_identity: String,
    /// How long the others must wait after the last change before taking over.
    pub(crate) lease_duration_seconds: i32,
    /// When the holder acquired the Lease.
    pub(crate) acquire_time: Option<Timestamp>,
    /// When the holder last renewed it.
    pub(crate) renew_time: Option<Timestamp>,
    /// How often the Lease has changed hands.
    pub(crate) leader_transitions: i32,
}

impl ElectionRecord {
    /// The record a Lease spec carries (absent fields read as empty or zero).
    pub(crate) fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return Self::default();
        };
        Self {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or(0),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or(0),
        }
    }

    /// The Lease spec of this record.
    pub(crate) fn to_spec(&self) -> LeaseSpec {
        LeaseSpec {
            holder_identity: Some(self.holder_identity.clone()),
            lease_duration_seconds: Some(self.lease_duration_seconds),
            acquire_time: self.acquire_time.map(MicroTime),
            renew_time: self.renew_time.map(MicroTime),
            lease_transitions: Some(self.leader_transitions),
            ..LeaseSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_lease_form() {
        let now = Timestamp::now();
        let record = ElectionRecord {
            holder_identity: "host_1".into(),
            lease_duration_seconds: 15,
            acquire_time: Some(now),
            renew_time: Some(now),
            leader_transitions: 3,
        };
        assert_eq!(ElectionRecord::from_spec(Some(&record.to_spec())), record);
        assert_eq!(ElectionRecord::from_spec(None), ElectionRecord::default());
    }
}
