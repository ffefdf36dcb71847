//! MCS labels by offset: OpenShift's `pkg/security/mcs/label.go` (cluster-policy-controller).
//!
//! A range `<prefix>/<k>[,<n>]` (default `s0:/2`) names the labels of `k` distinct categories
//! out of `c0` .. `c(n-1)` (`n` defaults to 1024, the SELinux maximum; `k` is at most 5). The
//! label at an offset is the combination of that rank in co-lexicographic order
//! (`categoriesForOffset`), written highest category first: offset 0 of `s0:/2` is
//! `s0:c1,c0`, offset 5 is `s0:c3,c2`. A namespace's block at offset `b` gets the label at
//! `b * labelsPerNamespace` (`DefaultMCSAllocation`; OpenShift's default is 5 labels per
//! namespace).

use std::fmt;
use thiserror::Error;

/// The default range, OpenShift's (`MCSAllocatorRange`).
pub const DEFAULT: &str = "s0:/2";
/// The default labels per namespace, OpenShift's (`MCSLabelsPerProject`).
pub const DEFAULT_LABELS_PER_NAMESPACE: u32 = 5;
const MAX_CATEGORIES: u32 = 1024;
const MAX_LABELS: u32 = 5;

/// A range of MCS labels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McsRange {
    prefix: String,
    /// Categories `c0` .. `c(n-1)`.
    n: u32,
    /// Categories per label.
    k: u32,
}

/// Why a range is refused (the texts of `ParseRange` and `NewRange`).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum McsRangeError {
    /// Not `<prefix>/<numLabels>[,<maxCategory>]`.
    #[error("mcs range {0:?} not in the format \"<prefix>/<numLabel>[,<maxCategory>]\"")]
    Format(String),
    /// More than five categories per label.
    #[error("mcs range {0:?} may not include more than 5 labels")]
    TooManyLabels(String),
    /// More than 1024 categories.
    #[error("mcs range {0:?} may not include more than 1024 categories")]
    TooManyCategories(String),
    /// Zero categories, or zero per label.
    #[error("mcs range {0:?}: label max value and label length must be positive integers")]
    Zero(String),
}

impl McsRange {
    /// Parses `<prefix>/<numLabels>[,<maxCategory>]`.
    pub fn parse(text: &str) -> Result<Self, McsRangeError> {
        let format = || McsRangeError::Format(text.to_owned());
        let (prefix, size) = text.split_once('/').ok_or_else(format)?;
        let (k, n) = match size.split_once(',') {
            Some((k, n)) => (k, Some(n)),
            None => (size, None),
        };
        let k: u32 = k.trim().parse().map_err(|_| format())?;
        let n: u32 = match n {
            Some(n) => n.trim().parse().map_err(|_| format())?,
            None => MAX_CATEGORIES,
        };
        if k > MAX_LABELS {
            return Err(McsRangeError::TooManyLabels(text.to_owned()));
        }
        if n > MAX_CATEGORIES {
            return Err(McsRangeError::TooManyCategories(text.to_owned()));
        }
        if n == 0 || k == 0 {
            return Err(McsRangeError::Zero(text.to_owned()));
        }
        Ok(Self {
            prefix: prefix.to_owned(),
            n,
            k,
        })
    }

    /// How many labels the range holds: `n` choose `k`.
    pub fn size(&self) -> u64 {
        binomial(self.n, self.k)
    }

    /// The label at `offset`, when the range holds it.
    pub fn label_at(&self, offset: u64) -> Option<String> {
        if offset >= self.size() {
            return None;
        }
        let mut prefix = self.prefix.clone();
        if !(prefix.is_empty() || prefix.ends_with(':') || prefix.ends_with(',')) {
            prefix.push(':');
        }
        let categories = categories_for_offset(offset, self.n, self.k);
        let listed: Vec<String> = categories.iter().map(|c| format!("c{c}")).collect();
        Some(format!("{prefix}{}", listed.join(",")))
    }
}

impl fmt::Display for McsRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.n == MAX_CATEGORIES {
            write!(f, "{}/{}", self.prefix, self.k)
        } else {
            write!(f, "{}/{},{}", self.prefix, self.k, self.n)
        }
    }
}

/// The co-lexicographic unrank of `offset` among the `k`-subsets of `0..n`, highest first.
/// The caller checks `offset < binomial(n, k)`.
fn categories_for_offset(mut offset: u64, mut n: u32, k: u32) -> Vec<u32> {
    let mut categories = Vec::with_capacity(k as usize);
    for i in 0..k {
        let mut current = binomial(n, k - i);
        while current > offset && n > 0 {
            n -= 1;
            current = binomial(n, k - i);
        }
        categories.push(n);
        offset -= current;
    }
    categories.sort_unstable_by(|a, b| b.cmp(a));
    categories
}

/// `n` choose `k`, exact for the sizes of SELinux categories (n <= 1024, k <= 5).
fn binomial(n: u32, k: u32) -> u64 {
    if n < k {
        return 0;
    }
    let mut r: u64 = 1;
    let mut top = u64::from(n);
    for d in 1..=u64::from(k) {
        r = r * top / d;
        top -= 1;
    }
    r
}
