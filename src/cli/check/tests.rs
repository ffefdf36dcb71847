use super::*;
use clap::Parser;
use std::error::Error as _;

#[track_caller]
fn args(argv: &[&str]) -> CheckArgs {
    let cli = crate::cli::Cli::try_parse_from([&["warrant", "check"][..], argv].concat()).unwrap();
    match cli.command {
        crate::cli::Command::Check(a) => a,
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_flags_say_what_is_wrong() {
    let rows: &[(&[&str], &str)] = &[
        (
            &["get"],
            "VERB and RESOURCE are required (or -f REVIEW.json)",
        ),
        (
            &["get", "pods", "-f", "r.json"],
            "give either -f REVIEW.json or VERB RESOURCE, not both",
        ),
        (&["get", "pods/"], "\"pods/\": name after '/' is empty"),
        (&["get", ".apps"], "\".apps\": resource is empty"),
        (
            &["get", "/healthz", "-n", "a"],
            "a non-resource path takes no namespace or subresource",
        ),
        (
            &["get", "pods", "--extra", "novalue"],
            "--extra \"novalue\": expected KEY=VALUE",
        ),
    ];
    for (argv, want) in rows {
        let e = args(argv).review().unwrap_err();
        assert_eq!(e.to_string(), *want, "{argv:?}");
    }
}

#[test]
fn a_bad_time_keeps_chronos_error() {
    let e = args(&["get", "pods", "--at", "yesterday"])
        .now()
        .unwrap_err();
    assert!(
        matches!(&e, InputError::At(t) if t.input == "yesterday"),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "--at \"yesterday\": not an RFC 3339 time: premature end of input"
    );
    let chrono = e.source().and_then(|t| t.source());
    assert!(
        chrono
            .and_then(|c| c.downcast_ref::<chrono::ParseError>())
            .is_some()
    );
}

#[test]
fn an_unreadable_review_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("absent.json");
    let e = args(&["-f", path.to_str().unwrap()]).review().unwrap_err();
    assert!(matches!(e, InputError::ReadFile { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "cannot read {}: No such file or directory (os error 2)",
            path.display()
        )
    );
}
