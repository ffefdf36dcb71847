//! [`Interner`]: one shared copy of each repeated string (namespaces, label keys and values,
//! owner UIDs, claim names), so ten thousand pods of one ReplicaSet hold its labels once.

use std::collections::HashSet;
use std::sync::Arc;

/// A set of shared strings. Strings no entry holds any more are dropped by
/// [`Interner::sweep`].
#[derive(Debug, Default)]
pub struct Interner {
    strings: HashSet<Arc<str>>,
}

impl Interner {
    /// The shared copy of `s` (made on first use).
    pub(crate) fn intern(&mut self, s: &str) -> Arc<str> {
        if let Some(found) = self.strings.get(s) {
            return found.clone();
        }
        let shared: Arc<str> = Arc::from(s);
        self.strings.insert(shared.clone());
        shared
    }

    /// Drops every string only the interner still holds; returns how many.
    pub(crate) fn sweep(&mut self) -> usize {
        let before = self.strings.len();
        self.strings.retain(|s| Arc::strong_count(s) > 1);
        before - self.strings.len()
    }

    /// How many strings are held.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    /// Whether no string is held.
    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::Interner;
    use std::sync::Arc;

    #[test]
    fn shares_and_sweeps() {
        let mut i = Interner::default();
        let a = i.intern("app");
        let b = i.intern("app");
        assert!(Arc::ptr_eq(&a, &b));
        let _gone = i.intern("gone");
        drop(_gone);
        assert_eq!(i.sweep(), 1);
        assert_eq!(i.len(), 1);
        drop((a, b));
        assert_eq!(i.sweep(), 1);
        assert!(i.is_empty());
    }
}
