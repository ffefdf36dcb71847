//! [`Store`]: one kind's objects by namespace and name, with the owner-UID -> children index.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// Where an object lives: namespace (`""` when cluster-scoped) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// Namespace (interned).
    pub namespace: Arc<str>,
    /// Name.
    pub name: Arc<str>,
}

/// One object as the index keeps it: identity, owners and the kind's compact body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object<B> {
    /// `metadata.uid`.
    pub uid: Arc<str>,
    /// The UIDs of `metadata.ownerReferences` (interned).
    pub owners: Box<[Arc<str>]>,
    /// What the kind keeps beyond metadata.
    pub body: B,
}

/// The objects of one kind. `children` maps an owner's UID to the objects naming it in their
/// owner references, held by the same shared pointer as the store (so that walking an owner
/// chain reads each child without a lookup by name).
#[derive(Debug)]
pub struct Store<B> {
    objects: BTreeMap<Arc<str>, Names<B>>,
    children: HashMap<Arc<str>, Vec<Child<B>>, UidHasher>,
    len: usize,
}

/// The children index's hasher: an admission request walks an owner chain through it (one
/// lookup per workload kind per owner), where SipHash cost several times the rest of the walk.
/// Seeded at random per map, like SipHash's keys: owner UIDs are written by whoever creates an
/// object, and a fixed seed would let them choose colliding ones.
pub(crate) type UidHasher = foldhash::fast::RandomState;

/// The objects of one namespace, by name.
type Names<B> = BTreeMap<Arc<str>, Arc<Object<B>>>;

/// One object naming an owner: where it lives and the object itself.
#[derive(Debug)]
pub(crate) struct Child<B> {
    /// Its namespace (interned).
    pub namespace: Arc<str>,
    /// The object, shared with the store's map.
    pub object: Arc<Object<B>>,
}

impl<B> Default for Store<B> {
    fn default() -> Self {
        Self {
            objects: BTreeMap::new(),
            children: HashMap::default(),
            len: 0,
        }
    }
}

impl<B> Store<B> {
    /// Adds or replaces the object at `key`.
    pub fn apply(&mut self, key: Key, object: Object<B>) {
        let object = Arc::new(object);
        let names = self.objects.entry(key.namespace.clone()).or_default();
        match names.insert(key.name, object.clone()) {
            Some(old) => self.unlink(&old),
            None => self.len += 1,
        }
        for owner in object.owners.iter() {
            self.children.entry(owner.clone()).or_default().push(Child {
                namespace: key.namespace.clone(),
                object: object.clone(),
            });
        }
    }

    /// Removes the object at `key` if its UID is `uid` (any UID when `uid` is empty: a later
    /// object of the same name is not removed by an older one's deletion). Whether it was.
    pub fn delete(&mut self, key: &Key, uid: &str) -> bool {
        let Some(names) = self.objects.get_mut(&key.namespace) else {
            return false;
        };
        if !names
            .get(&key.name)
            .is_some_and(|o| uid.is_empty() || o.uid.as_ref() == uid)
        {
            return false;
        }
        let Some(old) = names.remove(&key.name) else {
            return false;
        };
        if names.is_empty() {
            self.objects.remove(&key.namespace);
        }
        self.len -= 1;
        self.unlink(&old);
        true
    }

    /// Removes `old`'s entries from its owners' children (found by pointer: the entry is the
    /// very object the map held).
    fn unlink(&mut self, old: &Arc<Object<B>>) {
        for owner in old.owners.iter() {
            if let Some(children) = self.children.get_mut(owner) {
                if let Some(at) = children.iter().position(|c| Arc::ptr_eq(&c.object, old)) {
                    children.swap_remove(at);
                }
                if children.is_empty() {
                    self.children.remove(owner);
                }
            }
        }
    }

    /// The object `namespace/name`.
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Object<B>> {
        self.objects.get(namespace)?.get(name).map(|o| &**o)
    }

    /// Every object, by namespace then name.
    pub(crate) fn all(&self) -> impl Iterator<Item = (&str, &str, &Object<B>)> + '_ {
        self.objects.iter().flat_map(|(ns, names)| {
            names
                .iter()
                .map(move |(n, o)| (ns.as_ref(), n.as_ref(), &**o))
        })
    }

    /// The objects of `namespace`, by name.
    pub(crate) fn in_namespace<'a>(
        &'a self,
        namespace: &str,
    ) -> impl Iterator<Item = (&'a str, &'a Object<B>)> + 'a {
        self.objects
            .get(namespace)
            .into_iter()
            .flat_map(|names| names.iter().map(|(n, o)| (n.as_ref(), &**o)))
    }

    /// The objects whose owner references name `uid`.
    pub(crate) fn children(&self, uid: &str) -> &[Child<B>] {
        self.children.get(uid).map(Vec::as_slice).unwrap_or(&[])
    }

    /// How many objects are held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no object is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::{Key, Object, Store};
    use std::sync::Arc;

    fn key(ns: &str, name: &str) -> Key {
        Key {
            namespace: ns.into(),
            name: name.into(),
        }
    }

    fn obj(uid: &str, owners: &[&str]) -> Object<()> {
        Object {
            uid: uid.into(),
            owners: owners.iter().map(|o| Arc::<str>::from(*o)).collect(),
            body: (),
        }
    }

    /// `namespace/uid` of each child of `owner`.
    fn uids(s: &Store<()>, owner: &str) -> Vec<String> {
        let children = s.children(owner).iter();
        children
            .map(|c| format!("{}/{}", c.namespace, c.object.uid))
            .collect()
    }

    #[test]
    fn apply_replace_and_delete_keep_the_children_index() {
        let mut s = Store::default();
        s.apply(key("a", "p1"), obj("u1", &["rs1"]));
        s.apply(key("a", "p2"), obj("u2", &["rs1"]));
        assert_eq!(s.children("rs1").len(), 2);
        // Re-owned: the old link goes.
        s.apply(key("a", "p2"), obj("u2", &["rs2"]));
        assert_eq!(uids(&s, "rs1"), ["a/u1"]);
        assert_eq!(uids(&s, "rs2"), ["a/u2"]);
        // Replaced with the same owner: one link, to the new object.
        s.apply(key("a", "p2"), obj("u2b", &["rs2"]));
        assert_eq!(uids(&s, "rs2"), ["a/u2b"]);
        assert_eq!(s.len(), 2);
        // An older object's deletion does not remove a newer one of the same name.
        assert!(!s.delete(&key("a", "p1"), "old-uid"));
        assert!(s.delete(&key("a", "p1"), "u1"));
        assert!(s.children("rs1").is_empty());
        assert_eq!(s.len(), 1);
        assert!(s.get("a", "p1").is_none());
        assert_eq!(
            s.in_namespace("a").map(|(n, _)| n).collect::<Vec<_>>(),
            ["p2"]
        );
        assert!(s.delete(&key("a", "p2"), ""));
        assert!(s.children("rs2").is_empty());
        assert!(s.is_empty());
        assert_eq!(s.in_namespace("a").count(), 0);
    }
}
