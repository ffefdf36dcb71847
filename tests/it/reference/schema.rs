//! The chain file's JSON Schema (`docs/schema/authorization-configuration.json`) and the field
//! reference of `docs/configuration.md`, both from the traced schema types and the descriptions
//! file. Also: every shipped chain file names the schema for editors and validates against it.

use super::trace::{self, Registry, Shape};
use super::{check_block, check_file, read, root};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;

const DESCRIPTIONS: &str = "docs/schema/descriptions.yaml";
const SCHEMA: &str = "docs/schema/authorization-configuration.json";
const PAGE: &str = "docs/configuration.md";

/// The words for one struct.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct StructDoc {
    heading: String,
    description: String,
    fields: BTreeMap<String, FieldDoc>,
}

/// The words for one field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FieldDoc {
    description: String,
    #[serde(default, rename = "enum")]
    values: Vec<String>,
    #[serde(default)]
    default: Option<Value>,
    #[serde(default)]
    pattern: Option<String>,
    #[serde(default)]
    warrant_only: bool,
}

fn traced() -> Registry {
    trace::trace::<warrant::config::schema::File>().expect("the schema types trace")
}

fn descriptions() -> BTreeMap<String, StructDoc> {
    serde_saphyr::from_str(&read(DESCRIPTIONS)).expect("docs/schema/descriptions.yaml decodes")
}

/// Every traced struct and field has words, and every word belongs to a traced field.
fn coverage_problems(reg: &Registry, docs: &BTreeMap<String, StructDoc>) -> Vec<String> {
    let mut problems = Vec::new();
    for (name, fields) in &reg.structs {
        let Some(doc) = docs.get(*name) else {
            problems.push(format!("struct {name} has no entry"));
            continue;
        };
        for f in fields {
            if !doc.fields.contains_key(f.name) {
                problems.push(format!("{name}.{} has no description", f.name));
            }
        }
        for key in doc.fields.keys() {
            if !fields.iter().any(|f| f.name == key) {
                problems.push(format!("{name}.{key} is described but is not a field"));
            }
        }
    }
    for name in docs.keys() {
        if !reg.structs.contains_key(name.as_str()) {
            problems.push(format!("{name} is described but is not a schema struct"));
        }
    }
    problems
}

#[test]
fn every_field_of_the_chain_file_has_a_description() {
    let problems = coverage_problems(&traced(), &descriptions());
    assert!(
        problems.is_empty(),
        "{DESCRIPTIONS} and src/config/schema disagree:\n  {}",
        problems.join("\n  ")
    );
}

fn shape_schema(shape: &Shape, doc: Option<&FieldDoc>) -> Value {
    let mut s = match shape.required_form() {
        Shape::Bool => json!({"type": "boolean"}),
        Shape::Unsigned => json!({"type": "integer", "minimum": 0}),
        Shape::Integer => json!({"type": "integer"}),
        Shape::Number => json!({"type": "number"}),
        Shape::String => json!({"type": "string"}),
        Shape::Seq(inner) => json!({"type": "array", "items": shape_schema(inner, None)}),
        Shape::Map(inner) => {
            json!({"type": "object", "additionalProperties": shape_schema(inner, None)})
        }
        Shape::Struct(name) => json!({"allOf": [{"$ref": format!("#/definitions/{name}")}]}),
        Shape::Option(_) | Shape::Unknown => json!({}),
    };
    if let Some(doc) = doc {
        let obj = s.as_object_mut().expect("an object");
        obj.insert("description".into(), json!(doc.description));
        if !doc.values.is_empty() {
            let values = json!(doc.values);
            match obj.get_mut("items") {
                // A list of enumerated values: the values constrain the items.
                Some(items) => {
                    items["enum"] = values;
                }
                None => {
                    obj.insert("enum".into(), values);
                }
            }
        }
        if let Some(d) = &doc.default {
            obj.insert("default".into(), d.clone());
        }
        if let Some(p) = &doc.pattern {
            obj.insert("pattern".into(), json!(p));
        }
    }
    s
}

fn struct_schema(
    reg: &Registry,
    docs: &BTreeMap<String, StructDoc>,
    name: &str,
) -> Map<String, Value> {
    let doc = &docs[name];
    let mut properties = Map::new();
    let mut required = Vec::new();
    for f in &reg.structs[name] {
        properties.insert(
            f.name.into(),
            shape_schema(&f.shape, doc.fields.get(f.name)),
        );
        if f.required {
            required.push(json!(f.name));
        }
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("object"));
    out.insert("description".into(), json!(doc.description.trim()));
    out.insert("additionalProperties".into(), json!(false));
    out.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    out
}

/// The JSON Schema (draft-07, as yaml-language-server reads it) of the chain file.
fn json_schema(reg: &Registry, docs: &BTreeMap<String, StructDoc>) -> String {
    let mut root_schema = Map::new();
    root_schema.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    root_schema.insert(
        "title".into(),
        json!("warrant AuthorizationConfiguration (the chain file)"),
    );
    root_schema.extend(struct_schema(reg, docs, "File"));
    let mut definitions = Map::new();
    for name in &reg.order {
        if *name != "File" {
            definitions.insert(
                (*name).into(),
                Value::Object(struct_schema(reg, docs, name)),
            );
        }
    }
    root_schema.insert("definitions".into(), Value::Object(definitions));
    let mut text = serde_json::to_string_pretty(&Value::Object(root_schema)).expect("encodes");
    text.push('\n');
    text
}

#[test]
fn committed_json_schema_matches_the_schema_types() {
    let (reg, docs) = (traced(), descriptions());
    assert!(
        coverage_problems(&reg, &docs).is_empty(),
        "see every_field_of_the_chain_file_has_a_description"
    );
    check_file(SCHEMA, &json_schema(&reg, &docs));
}

fn anchor(name: &str) -> String {
    name.to_lowercase()
}

fn type_text(shape: &Shape) -> String {
    match shape.required_form() {
        Shape::Bool => "bool".into(),
        Shape::Unsigned => "integer >= 0".into(),
        Shape::Integer => "integer".into(),
        Shape::Number => "number".into(),
        Shape::String => "string".into(),
        Shape::Seq(inner) => format!("list of {}", type_text(inner)),
        Shape::Map(inner) => format!("map of {}", type_text(inner)),
        Shape::Struct(name) => format!("[object](#{})", anchor(name)),
        Shape::Option(_) | Shape::Unknown => "any".into(),
    }
}

fn cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

/// The field reference: one section per struct, in the order they nest.
fn reference(reg: &Registry, docs: &BTreeMap<String, StructDoc>) -> String {
    let mut out = String::new();
    for name in &reg.order {
        let doc = &docs[*name];
        let _ = writeln!(
            out,
            "<a id=\"{}\"></a>\n\n### `{}`\n",
            anchor(name),
            doc.heading
        );
        let _ = writeln!(out, "{}\n", cell(&doc.description));
        out.push_str("| field | type | default | meaning |\n|---|---|---|---|\n");
        for f in &reg.structs[name] {
            let fd = &doc.fields[f.name];
            let mut ty = type_text(&f.shape);
            if !fd.values.is_empty() {
                let values: Vec<String> = fd.values.iter().map(|v| format!("`{v}`")).collect();
                let _ = write!(ty, ": {}", values.join(", "));
            }
            let default = match (&fd.default, f.required) {
                (_, true) => "**required**".to_owned(),
                (Some(Value::String(s)), _) if s.is_empty() => "`\"\"`".to_owned(),
                (Some(Value::String(s)), _) => format!("`{s}`"),
                (Some(v), _) => format!("`{v}`"),
                (None, _) => String::new(),
            };
            let mut meaning = cell(&fd.description);
            if fd.warrant_only {
                meaning.push_str(" *(warrant.dev/v1alpha1 only)*");
            }
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                f.name,
                cell(&ty),
                default,
                meaning
            );
        }
        out.push('\n');
    }
    out
}

#[test]
fn configuration_reference_matches_the_schema_types() {
    let (reg, docs) = (traced(), descriptions());
    assert!(
        coverage_problems(&reg, &docs).is_empty(),
        "see every_field_of_the_chain_file_has_a_description"
    );
    check_block(PAGE, &reference(&reg, &docs));
}

/// The chain files shipped for people to start from.
fn shipped_chain_files() -> Vec<String> {
    let mut out = Vec::new();
    for dir in ["authz-config", "authz-config/examples"] {
        for entry in std::fs::read_dir(root().join(dir)).expect("authz-config is readable") {
            let path = entry.expect("a directory entry").path();
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            if path.extension().is_some_and(|x| x == "yaml")
                && text.contains("apiVersion: warrant.dev/")
            {
                out.push(format!(
                    "{dir}/{}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn shipped_chain_files_name_the_json_schema_for_editors() {
    let files = shipped_chain_files();
    assert!(files.len() >= 5, "found {files:?}");
    for rel in files {
        let depth = rel.matches('/').count();
        let line = format!(
            "# yaml-language-server: $schema={}{SCHEMA}",
            "../".repeat(depth)
        );
        assert!(
            read(&rel).lines().next() == Some(line.as_str()),
            "{rel}: the first line should be `{line}`"
        );
    }
}

/// A validator of the subset of JSON Schema that [`json_schema`] writes: type, properties,
/// additionalProperties, required, enum, items, allOf/$ref, minimum, pattern (a prefix check for
/// `^https://`; the other patterns are left to warrant's own validation).
fn validate(schema: &Value, defs: &Value, value: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(all) = schema.get("allOf").and_then(Value::as_array) {
        for s in all {
            validate(s, defs, value, path, errors);
        }
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/definitions/");
        validate(&defs[name], defs, value, path, errors);
    }
    if let Some(t) = schema.get("type").and_then(Value::as_str) {
        let ok = match t {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            _ => true,
        };
        if !ok {
            errors.push(format!("{path}: expected {t}, got {value}"));
            return;
        }
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array)
        && !values.contains(value)
    {
        errors.push(format!("{path}: {value} is not one of {values:?}"));
    }
    if let (Some(min), Some(n)) = (
        schema.get("minimum").and_then(Value::as_i64),
        value.as_i64(),
    ) && n < min
    {
        errors.push(format!("{path}: {n} < {min}"));
    }
    if schema.get("pattern").and_then(Value::as_str) == Some("^https://")
        && !value.as_str().is_some_and(|s| s.starts_with("https://"))
    {
        errors.push(format!("{path}: not an https URL"));
    }
    if let Some(obj) = value.as_object() {
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, v) in obj {
            match props.and_then(|p| p.get(k)) {
                Some(s) => validate(s, defs, v, &format!("{path}.{k}"), errors),
                None if schema.get("additionalProperties") == Some(&json!(false)) => {
                    errors.push(format!("{path}: unknown field {k}"));
                }
                None => {
                    if let Some(s) = schema.get("additionalProperties").filter(|s| s.is_object()) {
                        validate(s, defs, v, &format!("{path}.{k}"), errors);
                    }
                }
            }
        }
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(k) = r.as_str()
                && !obj.contains_key(k)
            {
                errors.push(format!("{path}: missing {k}"));
            }
        }
    }
    if let (Some(items), Some(arr)) = (schema.get("items"), value.as_array()) {
        for (i, v) in arr.iter().enumerate() {
            validate(items, defs, v, &format!("{path}[{i}]"), errors);
        }
    }
}

#[test]
fn shipped_chain_files_validate_against_the_json_schema() {
    let schema: Value = serde_json::from_str(&read(SCHEMA)).expect("the schema is JSON");
    let defs = schema["definitions"].clone();
    for rel in shipped_chain_files() {
        let value: Value = serde_saphyr::from_str(&read(&rel)).expect("a shipped file decodes");
        let mut errors = Vec::new();
        validate(&schema, &defs, &value, "", &mut errors);
        assert!(errors.is_empty(), "{rel}:\n  {}", errors.join("\n  "));
    }
}

#[test]
fn json_schema_refuses_what_warrant_refuses() {
    let schema: Value = serde_json::from_str(&read(SCHEMA)).expect("the schema is JSON");
    let defs = schema["definitions"].clone();
    for (yaml, want) in [
        (
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: Policy, name: p, polcy: {}}]\n",
            "unknown field polcy",
        ),
        (
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: RBAC, name: rbac}]\n",
            "is not one of",
        ),
        (
            "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: [{type: DeletionGuard, name: g, guard: {rateLimits: [{resource: pods, per: 1m}]}}]\n",
            "missing count",
        ),
    ] {
        let value: Value = serde_saphyr::from_str(yaml).expect("decodes");
        let mut errors = Vec::new();
        validate(&schema, &defs, &value, "", &mut errors);
        assert!(
            errors.iter().any(|e| e.contains(want)),
            "{yaml}: {errors:?}"
        );
        assert!(
            warrant::config::parse("x.yaml", yaml.as_bytes()).is_err(),
            "warrant accepts {yaml}"
        );
    }
}
