//! The table: pods x the shipped default constraints, each outcome derived by hand from
//! OpenShift's sources (`sccmatching/provider.go` and the strategies under
//! `pkg/securitycontextconstraints/` of `github.com/openshift/apiserver-library-go`).
//!
//! Each row is one pod and the errors it meets under the constraints that refuse it; every
//! other default constraint admits it. A text starting with `.` is under the constraint's path
//! (`provider NAME: `); the others (volumes, seccomp, sysctls) are rooted elsewhere, as in
//! OpenShift. Each constraint is judged alone and available, as with `openshift.io/required-scc`;
//! an admitted pod must then pass the validating side unchanged.

use super::{defaults, namespace, pod_with};
use crate::pod_security::engine::{Engine, Refusal};
use crate::pod_security::patch::{self, patch};
use crate::pod_security::subjects::SubjectType;
use serde_json::{Value, json};

const RV2: &str = "restricted-v2";
const R: &str = "restricted";
const NRV2: &str = "nonroot-v2";
const NR: &str = "nonroot";
const AU: &str = "anyuid";
const HNV2: &str = "hostnetwork-v2";
const HN: &str = "hostnetwork";
const HA: &str = "hostaccess";
const HMA: &str = "hostmount-anyuid";
const P: &str = "privileged";

const COLUMNS: &[&str] = &[RV2, R, NRV2, NR, AU, HNV2, HN, HA, HMA, P];
const ALL_BUT_PRIVILEGED: &[&str] = &[RV2, R, NRV2, NR, AU, HNV2, HN, HA, HMA];
const UID_RANGE: &[&str] = &[RV2, R, HNV2, HN, HA];
const NON_ROOT: &[&str] = &[NRV2, NR];
const FS_GROUP_MUST: &[&str] = &[RV2, R, HNV2, HN, HA];
const SUPPLEMENTAL_MUST: &[&str] = &[HNV2, HN];
const NO_HOST_NETWORK: &[&str] = &[RV2, R, NRV2, NR, AU, HMA];
const NO_HOST_PID: &[&str] = &[RV2, R, NRV2, NR, AU, HNV2, HN, HMA];
const NO_HOST_PATH: &[&str] = &[RV2, R, NRV2, NR, AU, HNV2, HN];
const NO_NFS: &[&str] = &[RV2, R, NRV2, NR, AU, HNV2, HN, HA];
const V2: &[&str] = &[RV2, NRV2, HNV2];
const NO_SECCOMP: &[&str] = &[R, NR, AU, HN, HA, HMA];
const NO_NET_BIND: &[&str] = &[R, NR, AU, HN, HA, HMA];

const RANGE_DETAIL: &str = "must be in the ranges: [1000680000, 1000689999]";

struct Row {
    name: &'static str,
    spec: Value,
    container: Value,
    refused: Vec<(&'static [&'static str], Vec<String>)>,
}

fn row(name: &'static str, spec: Value, container: Value) -> Row {
    Row {
        name,
        spec,
        container,
        refused: Vec::new(),
    }
}

impl Row {
    fn refused_by(mut self, constraints: &'static [&'static str], texts: &[&str]) -> Self {
        self.refused
            .push((constraints, texts.iter().map(|t| (*t).to_owned()).collect()));
        self
    }

    fn expected(&self, constraint: &str) -> Vec<String> {
        self.refused
            .iter()
            .filter(|(names, _)| names.contains(&constraint))
            .flat_map(|(_, texts)| texts.iter())
            .map(|t| {
                if t.starts_with('.') {
                    format!("provider {constraint}: {t}")
                } else {
                    t.clone()
                }
            })
            .collect()
    }
}

fn sc(value: Value) -> Value {
    json!({"securityContext": value})
}

fn rows() -> Vec<Row> {
    let none = || json!({});
    let range =
        |uid: i64| format!(".containers[0].runAsUser: Invalid value: {uid}: {RANGE_DETAIL}");
    let pod_seccomp = "pod.metadata.annotations[seccomp.security.alpha.kubernetes.io/pod]";
    let app_seccomp =
        "pod.metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app]";
    vec![
        row("no security context", none(), none()),
        row("root uid", none(), sc(json!({"runAsUser": 0})))
            .refused_by(UID_RANGE, &[&range(0)])
            .refused_by(
                NON_ROOT,
                &[".containers[0].runAsUser: Invalid value: 0: running with the root UID is forbidden"],
            ),
        row("uid outside the namespace range", none(), sc(json!({"runAsUser": 1000})))
            .refused_by(UID_RANGE, &[&range(1000)]),
        row("uid inside the namespace range", none(), sc(json!({"runAsUser": 1000680005}))),
        row("pod-level uid outside the range", sc(json!({"runAsUser": 2000})), none())
            .refused_by(UID_RANGE, &[&range(2000)]),
        row("privileged container", none(), sc(json!({"privileged": true}))).refused_by(
            ALL_BUT_PRIVILEGED,
            &[".containers[0].privileged: Invalid value: true: Privileged containers are not allowed"],
        ),
        row(
            "privileged init container",
            json!({"initContainers": [{"name": "init", "image": "i", "securityContext": {"privileged": true}}]}),
            none(),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &[".initContainers[0].privileged: Invalid value: true: Privileged containers are not allowed"],
        ),
        row("host network", json!({"hostNetwork": true}), none()).refused_by(
            NO_HOST_NETWORK,
            &[
                ".spec.securityContext.hostNetwork: Invalid value: true: Host network is not allowed to be used",
                ".containers[0].hostNetwork: Invalid value: true: Host network is not allowed to be used",
            ],
        ),
        row(
            "host port",
            none(),
            json!({"ports": [{"containerPort": 8080, "hostPort": 8080}]}),
        )
        .refused_by(
            NO_HOST_NETWORK,
            &[".containers[0].containers[0].hostPort: Invalid value: 8080: Host ports are not allowed to be used"],
        ),
        row("host PID", json!({"hostPID": true}), none()).refused_by(
            NO_HOST_PID,
            &[
                ".spec.securityContext.hostPID: Invalid value: true: Host PID is not allowed to be used",
                ".containers[0].hostPID: Invalid value: true: Host PID is not allowed to be used",
            ],
        ),
        row("host IPC", json!({"hostIPC": true}), none()).refused_by(
            NO_HOST_PID,
            &[
                ".spec.securityContext.hostIPC: Invalid value: true: Host IPC is not allowed to be used",
                ".containers[0].hostIPC: Invalid value: true: Host IPC is not allowed to be used",
            ],
        ),
        row(
            "hostPath volume",
            json!({"volumes": [{"name": "logs", "hostPath": {"path": "/var/log"}}]}),
            none(),
        )
        .refused_by(
            NO_HOST_PATH,
            &["spec.volumes[0]: Invalid value: \"hostPath\": hostPath volumes are not allowed to be used"],
        ),
        row(
            "nfs volume",
            json!({"volumes": [{"name": "data", "nfs": {"server": "nfs.example", "path": "/x"}}]}),
            none(),
        )
        .refused_by(
            NO_NFS,
            &["spec.volumes[0]: Invalid value: \"nfs\": nfs volumes are not allowed to be used"],
        ),
        row(
            "gitRepo volume",
            json!({"volumes": [{"name": "src", "gitRepo": {"repository": "https://git.example/x"}}]}),
            none(),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &["spec.volumes[0]: Invalid value: \"gitRepo\": gitRepo volumes are not allowed to be used"],
        ),
        row(
            "emptyDir, csi and the service account token volume",
            json!({"volumes": [
                {"name": "tmp", "emptyDir": {}},
                {"name": "c", "csi": {"driver": "secrets.example"}},
                {"name": "kube-api-access", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                ]}}
            ]}),
            none(),
        ),
        row(
            "adds NET_ADMIN",
            none(),
            sc(json!({"capabilities": {"add": ["NET_ADMIN"]}})),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &[".containers[0].capabilities.add: Invalid value: \"NET_ADMIN\": capability may not be added"],
        ),
        row(
            "adds SYS_ADMIN",
            none(),
            sc(json!({"capabilities": {"add": ["SYS_ADMIN"]}})),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &[".containers[0].capabilities.add: Invalid value: \"SYS_ADMIN\": capability may not be added"],
        ),
        row(
            "adds NET_BIND_SERVICE",
            none(),
            sc(json!({"capabilities": {"add": ["NET_BIND_SERVICE"]}})),
        )
        .refused_by(
            NO_NET_BIND,
            &[".containers[0].capabilities.add: Invalid value: \"NET_BIND_SERVICE\": capability may not be added"],
        ),
        row(
            "drops ALL and adds NET_BIND_SERVICE",
            none(),
            sc(json!({"capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]}})),
        )
        .refused_by(
            NO_NET_BIND,
            &[".containers[0].capabilities.add: Invalid value: \"NET_BIND_SERVICE\": capability may not be added"],
        ),
        row(
            "allows privilege escalation",
            none(),
            sc(json!({"allowPrivilegeEscalation": true})),
        )
        .refused_by(
            V2,
            &[".containers[0].allowPrivilegeEscalation: Invalid value: true: Allowing privilege escalation for containers is not allowed"],
        ),
        row(
            "fsGroup the namespace's pre-allocated default",
            sc(json!({"fsGroup": 1000680000})),
            none(),
        ),
        row(
            "fsGroup inside the range but not the default",
            sc(json!({"fsGroup": 1000680001})),
            none(),
        )
        .refused_by(
            FS_GROUP_MUST,
            &[".spec.securityContext.fsGroup: Invalid value: []int64{1000680001}: 1000680001 is not an allowed group"],
        ),
        row("fsGroup outside the range", sc(json!({"fsGroup": 0})), none()).refused_by(
            FS_GROUP_MUST,
            &[".spec.securityContext.fsGroup: Invalid value: []int64{0}: 0 is not an allowed group"],
        ),
        row(
            "supplemental group outside the namespace's",
            sc(json!({"supplementalGroups": [5]})),
            none(),
        )
        .refused_by(
            SUPPLEMENTAL_MUST,
            &[".spec.securityContext.supplementalGroups: Invalid value: []int64{5}: 5 is not an allowed group"],
        ),
        row(
            "supplemental groups inside and outside",
            sc(json!({"supplementalGroups": [1000680500, 7]})),
            none(),
        )
        .refused_by(
            SUPPLEMENTAL_MUST,
            &[".spec.securityContext.supplementalGroups: Invalid value: []int64{1000680500, 7}: 7 is not an allowed group"],
        ),
        row(
            "supplemental group inside the namespace's",
            sc(json!({"supplementalGroups": [1000680500]})),
            none(),
        ),
        row(
            "empty supplemental groups",
            sc(json!({"supplementalGroups": []})),
            none(),
        )
        .refused_by(
            SUPPLEMENTAL_MUST,
            &[".spec.securityContext.supplementalGroups: Invalid value: []int64{}: unable to validate empty groups against required ranges"],
        ),
        row(
            "unconfined seccomp",
            sc(json!({"seccompProfile": {"type": "Unconfined"}})),
            none(),
        )
        .refused_by(
            V2,
            &[&format!("{pod_seccomp}: Forbidden: unconfined is not an allowed seccomp profile. Valid values are [runtime/default]")],
        )
        .refused_by(NO_SECCOMP, &[&format!("{pod_seccomp}: Forbidden: seccomp may not be set")]),
        row(
            "runtime default seccomp",
            sc(json!({"seccompProfile": {"type": "RuntimeDefault"}})),
            none(),
        )
        .refused_by(NO_SECCOMP, &[&format!("{pod_seccomp}: Forbidden: seccomp may not be set")]),
        row(
            "container localhost seccomp",
            none(),
            sc(json!({"seccompProfile": {"type": "Localhost", "localhostProfile": "audit.json"}})),
        )
        .refused_by(
            V2,
            &[&format!("{app_seccomp}: Forbidden: localhost/audit.json is not an allowed seccomp profile. Valid values are [runtime/default]")],
        )
        .refused_by(NO_SECCOMP, &[&format!("{app_seccomp}: Forbidden: seccomp may not be set")]),
        row(
            "unsafe sysctl",
            sc(json!({"sysctls": [{"name": "kernel.msgmax", "value": "65536"}]})),
            none(),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &["pod.spec.securityContext.sysctls[0]: Forbidden: unsafe sysctl \"kernel.msgmax\" is not allowed"],
        ),
        row(
            "safe sysctl",
            sc(json!({"sysctls": [{"name": "net.ipv4.tcp_syncookies", "value": "1"}]})),
            none(),
        ),
        row(
            "foreign SELinux level",
            sc(json!({"seLinuxOptions": {"level": "s0:c1,c2"}})),
            none(),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &[
                ".spec.securityContext.seLinuxOptions.level: Invalid value: \"s0:c1,c2\": must be s0:c26,c5",
                ".containers[0].seLinuxOptions.level: Invalid value: \"s0:c1,c2\": must be s0:c26,c5",
            ],
        ),
        row(
            "the namespace's SELinux categories in another order",
            sc(json!({"seLinuxOptions": {"level": "s0:c5,c26"}})),
            none(),
        ),
        row(
            "container SELinux type",
            none(),
            sc(json!({"seLinuxOptions": {"type": "spc_t"}})),
        )
        .refused_by(
            ALL_BUT_PRIVILEGED,
            &[
                ".containers[0].seLinuxOptions.level: Invalid value: \"\": must be s0:c26,c5",
                ".containers[0].seLinuxOptions.type: Invalid value: \"spc_t\": must be ",
            ],
        ),
        row(
            "runAsNonRoot false",
            none(),
            sc(json!({"runAsNonRoot": false})),
        )
        .refused_by(
            NON_ROOT,
            &[".containers[0].runAsNonRoot: Invalid value: false: must be true"],
        ),
        row("hostUsers false", json!({"hostUsers": false}), none()),
    ]
}

#[test]
fn every_pod_meets_every_default_constraint_as_openshift_decides() {
    let defaults = defaults();
    let mut names: Vec<&str> = defaults.iter().map(|c| c.name()).collect();
    let mut columns = COLUMNS.to_vec();
    names.sort_unstable();
    columns.sort_unstable();
    assert_eq!(names, columns, "the table covers every shipped constraint");
    let everyone = |_: &_| Some(SubjectType::User);
    let mut cases = 0;
    let mut wrong = Vec::new();
    for row in rows() {
        let pod = pod_with(row.spec.clone(), row.container.clone());
        for constraint in &defaults {
            cases += 1;
            let name = constraint.name();
            let engine = Engine::new([constraint.clone()]);
            let expected = row.expected(name);
            match engine.admit(&namespace(), &pod, &everyone) {
                Ok(admitted) if expected.is_empty() => {
                    let targeted = patch(&pod, &admitted.pod).map(|p| serde_json::to_value(p).ok());
                    let whole =
                        patch::whole(&pod, &admitted.pod).map(|p| serde_json::to_value(p).ok());
                    if targeted.as_ref().ok() != whole.as_ref().ok() || targeted.is_err() {
                        wrong.push(format!(
                            "{} x {name}: the patch {targeted:?} is not the whole pods' diff {whole:?}",
                            row.name
                        ));
                    }
                    if let Err(refusal) = engine.validate(&namespace(), &admitted.pod, &everyone) {
                        wrong.push(format!(
                            "{} x {name}: admitted, but the admitted pod fails validation: {refusal}",
                            row.name
                        ));
                    }
                }
                Ok(_) => wrong.push(format!(
                    "{} x {name}: admitted, expected {expected:?}",
                    row.name
                )),
                Err(refusal) => {
                    let text = refusal.to_string();
                    let missing: Vec<&String> = expected
                        .iter()
                        .filter(|e| !text.contains(e.as_str()))
                        .collect();
                    if expected.is_empty() || !missing.is_empty() {
                        wrong.push(format!(
                            "{} x {name}: refused with {text}\n    missing {missing:?}",
                            row.name
                        ));
                    }
                    assert!(
                        matches!(refusal, Refusal::NoConstraintValidates(_)),
                        "{text}"
                    );
                    assert!(text.starts_with(
                        "unable to validate against any security context constraint: "
                    ));
                }
            }
        }
    }
    assert!(cases >= 150, "{cases} cases");
    assert!(
        wrong.is_empty(),
        "{} of {cases} cases wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}
