//! The variables of a condition (KEP-5681): what kube-apiserver hands an authorizer when it
//! evaluates conditions at admission (`ConditionsData` in
//! `k8s.io/apiserver/pkg/authorization/authorizer/interfaces.go`, sent to a webhook as the
//! `admissionRequest` of an `AuthorizationConditionsReview`, v0.38.0-beta.0): `object` (CREATE,
//! UPDATE), `oldObject` (UPDATE, DELETE) and `request`, the admission request itself. All three
//! are `dyn`, as a ValidatingAdmissionPolicy without a schema sees them; an absent object is
//! `null`. `namespaceObject` is not declared: v1.38's `ConditionsData` carries no namespace, so
//! no evaluator could give it a value.

use super::types::Ty;
use ::cel as engine;
use engine::objects::{Key, Map};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The variables a condition may use, for the load-time type check.
pub(super) fn declarations() -> Vec<(&'static str, Ty)> {
    vec![
        ("object", Ty::Dyn),
        ("oldObject", Ty::Dyn),
        ("request", Ty::Dyn),
    ]
}

/// JSON to a CEL value: integers stay `int` (as Kubernetes' unstructured conversion gives
/// int64), other numbers become `double`.
fn value(json: &Value) -> engine::Value {
    match json {
        Value::Null => engine::Value::Null,
        Value::Bool(b) => engine::Value::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => engine::Value::Int(i),
            None => engine::Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => engine::Value::String(Arc::new(s.clone())),
        Value::Array(items) => engine::Value::List(Arc::new(items.iter().map(value).collect())),
        Value::Object(fields) => {
            let map: HashMap<Key, engine::Value> = fields
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), value(v)))
                .collect();
            engine::Value::Map(Map::from(map))
        }
    }
}

fn bind(context: &mut engine::Context<'static, 'static>, name: &str, json: Option<&Value>) {
    let v = json.map_or(engine::Value::Null, value);
    // Every JSON value converts; were one not to, the variable stays unbound and an expression
    // reading it fails (an erroring Deny condition denies).
    if let Ok(val) = Box::<dyn engine::common::value::Val>::try_from(v) {
        context.add_variable_as_val(name, val);
    }
}

/// An admission request bound for the conditions evaluated on it: built once per conditions
/// review, then shared by its conditions.
pub struct Admission {
    context: engine::Context<'static, 'static>,
}

impl std::fmt::Debug for Admission {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Admission")
    }
}

impl Admission {
    /// Binds an admission request (the `admissionRequest` of a conditions review) as a
    /// condition sees it: `object`, `oldObject`, and `request` without the two objects.
    pub fn new(admission_request: &Value) -> Self {
        let env = match super::environment::shared() {
            Ok(env) => Arc::clone(&env.env),
            Err(_) => Arc::new(engine::Env::default()),
        };
        let mut context = engine::Context::with_env(env);
        let field = |name: &str| admission_request.get(name).filter(|v| !v.is_null());
        bind(&mut context, "object", field("object"));
        bind(&mut context, "oldObject", field("oldObject"));
        let mut request = admission_request.clone();
        if let Some(fields) = request.as_object_mut() {
            fields.remove("object");
            fields.remove("oldObject");
        }
        bind(&mut context, "request", Some(&request));
        Self { context }
    }

    /// The evaluation context holding the three variables.
    pub(super) fn context(&self) -> &engine::Context<'static, 'static> {
        &self.context
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Expression, Variables};
    use super::*;

    fn eval(source: &str, request: &Value) -> Result<bool, String> {
        let e = Expression::compile(source, Variables::Admission).map_err(|e| e.to_string())?;
        e.evaluate_admission(&Admission::new(request))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn conditions_read_the_objects_and_the_request() {
        let delete = serde_json::json!({
            "uid": "u", "operation": "DELETE", "userInfo": {"username": "jane", "groups": ["team-a"]},
            "oldObject": {"metadata": {"labels": {"protection": "critical"}}, "spec": {"replicas": 3}},
            "object": null
        });
        let guarded = "has(oldObject.metadata.labels) && 'protection' in oldObject.metadata.labels && oldObject.metadata.labels['protection'] == 'critical'";
        assert_eq!(eval(guarded, &delete), Ok(true));
        assert_eq!(eval("oldObject.spec.replicas == 3", &delete), Ok(true));
        assert_eq!(eval("object == null", &delete), Ok(true));
        assert_eq!(eval("request.operation == 'DELETE'", &delete), Ok(true));
        assert_eq!(
            eval("'team-a' in request.userInfo.groups", &delete),
            Ok(true)
        );
        let unlabelled = serde_json::json!({"uid": "u", "oldObject": {"metadata": {}}});
        assert_eq!(eval(guarded, &unlabelled), Ok(false));
        // An unguarded lookup errors; for a Deny condition that denies.
        assert!(
            eval(
                "oldObject.metadata.labels['protection'] == 'x'",
                &unlabelled
            )
            .is_err()
        );
    }

    #[test]
    fn conditions_are_checked_at_load() {
        let err = |s: &str| {
            Expression::compile(s, Variables::Admission)
                .unwrap_err()
                .to_string()
        };
        assert!(err("namespaceObject.metadata.name == 'x'").contains("undeclared reference"));
        assert!(err("now > now").contains("undeclared reference"));
        assert!(err("oldObject.metadata.labels[").contains("ERROR: <input>:1:"));
        assert!(err("'x'").contains("must evaluate to bool"));
    }
}
