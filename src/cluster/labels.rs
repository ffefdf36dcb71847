//! [`Labels`]: a small sorted map of shared strings (an object's labels, a Service's selector).

use super::intern::Interner;
use std::sync::Arc;

/// Label pairs sorted by key; keys and values are interned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Box<[(Arc<str>, Arc<str>)]>);

impl Labels {
    /// The labels of `pairs` (a later duplicate key wins).
    pub fn new<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>, i: &mut Interner) -> Self {
        let mut v: Vec<(Arc<str>, Arc<str>)> = Vec::new();
        for (k, val) in pairs {
            match v.binary_search_by(|(key, _)| key.as_ref().cmp(k)) {
                Ok(at) => v[at].1 = i.intern(val),
                Err(at) => v.insert(at, (i.intern(k), i.intern(val))),
            }
        }
        Self(v.into_boxed_slice())
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .map(|at| self.0[at].1.as_ref())
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many labels there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The pairs, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v.as_ref()))
    }

    /// Whether this set, read as a Service's equality selector, selects an object carrying
    /// `labels`. An empty selector selects nothing: the EndpointSlice controller gives a Service
    /// without a selector no endpoints (k8s.io/kubernetes
    /// pkg/controller/endpointslice/endpointslice_controller.go, `syncService`), and an empty
    /// selector map is stored as none.
    pub(crate) fn selects(&self, labels: &Labels) -> bool {
        !self.is_empty()
            && self
                .0
                .iter()
                .all(|(k, v)| labels.shared_value(k).is_some_and(|have| same(have, v)))
    }

    /// The value of `key`, where both sides are usually interned by one [`Interner`]: the same
    /// pointer is the same string, found without comparing text.
    fn shared_value(&self, key: &Arc<str>) -> Option<&Arc<str>> {
        let at = self.0.binary_search_by(|(k, _)| {
            if Arc::ptr_eq(k, key) {
                std::cmp::Ordering::Equal
            } else {
                k.as_ref().cmp(key)
            }
        });
        at.ok().map(|at| &self.0[at].1)
    }
}

/// Whether two shared strings are equal (by pointer first).
fn same(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

#[cfg(test)]
mod tests {
    use super::Labels;
    use crate::cluster::intern::Interner;

    #[test]
    fn sorted_lookup_and_selection() {
        let mut i = Interner::default();
        let pod = Labels::new(
            [("tier", "web"), ("app", "shop"), ("app", "checkout")],
            &mut i,
        );
        assert_eq!(pod.len(), 2);
        assert_eq!(pod.get("app"), Some("checkout"));
        assert_eq!(pod.iter().next(), Some(("app", "checkout")));
        let sel = Labels::new([("app", "checkout")], &mut i);
        assert!(sel.selects(&pod));
        assert!(!Labels::new([("app", "shop")], &mut i).selects(&pod));
        assert!(!Labels::new([("app", "checkout"), ("x", "y")], &mut i).selects(&pod));
        assert!(
            !Labels::default().selects(&pod),
            "an empty selector selects nothing"
        );
        // A selector read apart (a stored object's, its own interner): compared by text.
        let mut apart = Interner::default();
        assert!(Labels::new([("app", "checkout")], &mut apart).selects(&pod));
        assert!(!Labels::new([("app", "shop")], &mut apart).selects(&pod));
        assert!(!Labels::new([("tier", "web"), ("zone", "a")], &mut apart).selects(&pod));
    }
}
