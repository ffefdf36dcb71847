//! The declared type of the `request` variable: the v1 `SubjectAccessReviewSpec`, field by
//! field, as kube-apiserver declares it for authorization CEL
//! (`k8s.io/apiserver/pkg/authorization/cel/compile.go`, with the selector fields that
//! AuthorizeWithSelectors adds; the gate is on by default from 1.32 and locked on from 1.34).

use super::types::{FieldTy, ObjectType};

/// `kubernetes.SubjectAccessReviewSpec`.
pub(crate) static REQUEST: ObjectType = ObjectType {
    name: "kubernetes.SubjectAccessReviewSpec",
    fields: &[
        ("resourceAttributes", FieldTy::Object(&RESOURCE_ATTRIBUTES)),
        (
            "nonResourceAttributes",
            FieldTy::Object(&NON_RESOURCE_ATTRIBUTES),
        ),
        ("user", FieldTy::String),
        ("groups", FieldTy::StringList),
        ("extra", FieldTy::StringListMap),
        ("uid", FieldTy::String),
    ],
};

/// `kubernetes.ResourceAttributes`.
pub(crate) static RESOURCE_ATTRIBUTES: ObjectType = ObjectType {
    name: "kubernetes.ResourceAttributes",
    fields: &[
        ("namespace", FieldTy::String),
        ("verb", FieldTy::String),
        ("group", FieldTy::String),
        ("version", FieldTy::String),
        ("resource", FieldTy::String),
        ("subresource", FieldTy::String),
        ("name", FieldTy::String),
        ("fieldSelector", FieldTy::Object(&FIELD_SELECTOR)),
        ("labelSelector", FieldTy::Object(&LABEL_SELECTOR)),
    ],
};

/// `kubernetes.NonResourceAttributes`.
pub(crate) static NON_RESOURCE_ATTRIBUTES: ObjectType = ObjectType {
    name: "kubernetes.NonResourceAttributes",
    fields: &[("path", FieldTy::String), ("verb", FieldTy::String)],
};

/// `kubernetes.FieldSelectorAttributes`.
pub(crate) static FIELD_SELECTOR: ObjectType = ObjectType {
    name: "kubernetes.FieldSelectorAttributes",
    fields: &[
        ("rawSelector", FieldTy::String),
        ("requirements", FieldTy::ObjectList(&SELECTOR_REQUIREMENT)),
    ],
};

/// `kubernetes.LabelSelectorAttributes`.
pub(crate) static LABEL_SELECTOR: ObjectType = ObjectType {
    name: "kubernetes.LabelSelectorAttributes",
    fields: &[
        ("rawSelector", FieldTy::String),
        ("requirements", FieldTy::ObjectList(&SELECTOR_REQUIREMENT)),
    ],
};

/// `kubernetes.SelectorRequirement`, shared by both selectors.
pub(crate) static SELECTOR_REQUIREMENT: ObjectType = ObjectType {
    name: "kubernetes.SelectorRequirement",
    fields: &[
        ("key", FieldTy::String),
        ("operator", FieldTy::String),
        ("values", FieldTy::StringList),
    ],
};
