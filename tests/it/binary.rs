//! The `warrant` binary: `serve` with no flags from an empty directory, `check` and `validate`
//! exit codes, refusals of unsafe flags.

use crate::support::{run_bin as run, *};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_with_no_flags_starts_secure_answers_and_survives_hup_and_usr1() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(BIN)
        .arg("serve")
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let started = Instant::now();
    let mut seen = Vec::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => {
                let done = l.starts_with("try: curl");
                seen.push(l);
                if done {
                    break;
                }
            }
            Err(_) => {
                if let Some(status) = child.try_wait().unwrap() {
                    panic!("warrant serve exited with {status}: {seen:#?}");
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no start-up banner: {seen:#?}"
        );
    }
    assert!(
        seen.iter()
            .any(|l| l == "warrant listening on https://127.0.0.1:8443/authorize"),
        "{seen:#?}"
    );
    let state = dir.path().join(".warrant");
    let kubeconfig = std::fs::read_to_string(state.join("kubeconfig.yaml")).unwrap();
    assert!(
        kubeconfig.contains("server: https://127.0.0.1:8443/authorize"),
        "{kubeconfig}"
    );
    let read = |n: &str| std::fs::read_to_string(state.join(n)).unwrap();
    let ca = read("ca.crt");
    let leaf = Leaf {
        cert_pem: read("client.crt"),
        key_pem: read("client.key"),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(state.join("client.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "client key must not be readable by others");
    }
    let body = std::fs::read_to_string(repo("tests/fixtures/reviews/v1-resource.json")).unwrap();
    let url = "https://127.0.0.1:8443/authorize";
    let (code, v) = post_review(&client(&ca, Some(&leaf)), url, &body).await;
    assert_eq!(code, 200);
    assert_eq!(v["status"]["denied"], true);
    assert_eq!(
        v["status"]["reason"],
        "protected-deletions: Everything is forbidden."
    );
    // Secure by default: no client certificate, no answer.
    let (code, _) = post_review(&client(&ca, None), url, &body).await;
    assert_eq!(code, 401);

    // SIGHUP reloads and SIGUSR1/SIGUSR2 are ignored; none of them stops
    // the server.
    let pid = child.id().to_string();
    for sig in ["-HUP", "-USR1", "-USR2"] {
        assert!(
            Command::new("kill")
                .args([sig, &pid])
                .status()
                .unwrap()
                .success()
        );
    }
    let wanted = ["SIGHUP: re-reading", "SIGUSR1 ignored", "SIGUSR2 ignored"];
    let logged = Instant::now() + Duration::from_secs(10);
    while !wanted.iter().all(|w| seen.iter().any(|l| l.contains(w))) {
        assert!(Instant::now() < logged, "signals not logged: {seen:#?}");
        if let Ok(l) = rx.recv_timeout(Duration::from_millis(100)) {
            seen.push(l);
        }
    }
    assert!(
        child.try_wait().unwrap().is_none(),
        "a signal stopped warrant"
    );
    let (code, _) = post_review(&client(&ca, Some(&leaf)), url, &body).await;
    assert_eq!(code, 200);

    // SIGTERM drains and exits 0; the audit record reached standard output.
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "warrant did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    let first: serde_json::Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(first["user"], "jane");
    assert_eq!(first["decidedBy"], "protected-deletions");
}

#[test]
fn check_exit_codes_and_trace() {
    let dir = tempfile::tempdir().unwrap();
    let allow = dir.path().join("allow.yaml");
    std::fs::write(&allow, ALLOW_ALL).unwrap();
    let deny = repo("authz-config/warrant.yaml");
    let (code, out, _) = run(&[
        "check",
        "delete",
        "deployments.apps/web",
        "-n",
        "production",
        "--as",
        "jane",
        "--config",
        &deny,
    ]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.starts_with("no (Deny)\nreason: protected-deletions: Everything is forbidden.\n"),
        "{out}"
    );
    assert!(
        out.contains("1. protected-deletions (AlwaysDeny): Deny"),
        "{out}"
    );
    let (code, out, _) = run(&[
        "check",
        "get",
        "/healthz",
        "--config",
        allow.to_str().unwrap(),
        "-o",
        "json",
    ]);
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["allowed"], true);
    assert_eq!(v["denied"], false);
    assert_eq!(v["trace"][0]["authorizer"], "allow-all");
    let (code, out, _) = run(&[
        "check",
        "-f",
        &repo("tests/fixtures/reviews/v1beta1-nonresource.json"),
        "--config",
        &deny,
        "-o",
        "json",
    ]);
    // The shipped default only denies deletions in protected namespaces: no opinion here.
    assert_eq!(code, 4, "{out}");
    // Usage and config errors exit 2.
    assert_eq!(run(&["check", "get"]).0, 2);
    assert_eq!(
        run(&[
            "check",
            "get",
            "pods",
            "--at",
            "yesterday",
            "--config",
            &deny
        ])
        .0,
        2
    );
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        "apiVersion: warrant.dev/v1alpha1\nkind: AuthorizationConfiguration\nauthorizers: []\n",
    )
    .unwrap();
    let (code, _, err) = run(&["check", "get", "pods", "--config", bad.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.yaml:3: authorizers: Required value"),
        "{err}"
    );
}

#[test]
fn validate_exit_codes() {
    let (code, out, _) = run(&["validate", &repo("authz-config/warrant.yaml")]);
    assert_eq!(code, 0, "{out}");
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n- type: RBAC\n  name: rbac\n- type: AlwaysDeny\n  name: FOO\n").unwrap();
    let (code, out, _) = run(&[
        "validate",
        &repo("authz-config/warrant.yaml"),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(code, 1);
    let b = bad.display();
    assert!(
        out.contains(&format!(
            "{b}:4: authorizers[0].type: Unsupported value: \"RBAC\""
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{b}:7: authorizers[1].name: Invalid value: \"FOO\""
        )),
        "{out}"
    );
}

#[test]
fn insecure_listen_must_be_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = run(&[
        "serve",
        "--insecure-listen",
        "0.0.0.0:0",
        "--listen",
        "127.0.0.1:0",
        "--state-dir",
        dir.path().to_str().unwrap(),
        "--audit-log",
        "none",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("plain HTTP is only served on a loopback address"),
        "{err}"
    );
}
