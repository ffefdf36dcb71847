//! Protection recommendations from history (`warrant recommend`): the writes an audit history
//! records ([`history`]: kube-apiserver's audit log and warrant's own records), judged by pure
//! rules ([`rules`]: what was deleted and restored soon after, what many principals write, what
//! is never deleted and the risk model scores high), against the cluster as it is now
//! ([`assemble`]: which objects exist, their protection, their risk), as levels per object and
//! per namespace with the evidence for each, and the label patches that would apply them.

pub mod assemble;
pub mod history;
pub mod rules;
