//! [`LabelValues`]: the objects of one namespace carrying one label, grouped by its value (what
//! [`super::ClusterView::labelled_inside`] answers, so the guard can see the protection labels of
//! what a Namespace deletion takes with it).

/// The most distinct values a [`LabelValues`] lists; beyond them it is
/// [`LabelValues::truncated`].
pub const MAX_LABEL_VALUES: usize = 1_000;

/// One value of the label and the objects carrying it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LabelValue {
    /// The label value as written.
    pub value: String,
    /// The first object carrying it, as `resource[.group]/name` (`deployments.apps/checkout`;
    /// workloads first, then Services, Ingresses, PersistentVolumeClaims and pods).
    pub object: String,
    /// How many objects carry it.
    pub count: u32,
}

/// The objects of one namespace carrying one label key, grouped by value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelValues {
    /// Each value found, sorted by value, at most [`MAX_LABEL_VALUES`].
    pub values: Vec<LabelValue>,
    /// More distinct values were found than are listed.
    pub truncated: bool,
}
