#!/usr/bin/env python3
"""`helm lint` and `helm template` over the values matrix (cert-manager on/off, monitoring
on/off, HPA on/off), each rendering checked for what its switches promise; then the chart's
refusals (a chain whose guard names differ from the webhooks', a missing CA bundle).
Usage: matrix.py HELM CHART"""
import itertools
import subprocess
import sys

import yaml

helm, chart = sys.argv[1], sys.argv[2]
failures, passed = [], 0


def render(sets, expect_fail=None):
    args = [helm, "template", "warrant", chart, "--namespace", "warrant-system", "--include-crds"]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, capture_output=True, text=True)
    if expect_fail is not None:
        return r
    if r.returncode != 0:
        raise RuntimeError(f"helm template {' '.join(sets)}: {r.stderr}")
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def check(name, cond, detail=""):
    global passed
    if cond:
        passed += 1
    else:
        failures.append(f"{name}: {detail}")


for cm, mon, hpa in itertools.product([False, True], repeat=3):
    case = f"certManager={cm} monitoring={mon} hpa={hpa}"
    sets = [f"tls.certManager.enabled={str(cm).lower()}",
            f"monitoring.serviceMonitor.enabled={str(mon).lower()}",
            f"monitoring.prometheusRule.enabled={str(mon).lower()}",
            f"monitoring.dashboard.enabled={str(mon).lower()}",
            f"autoscaling.enabled={str(hpa).lower()}"]
    if not cm:
        sets += ["tls.caBundle=Q0E="]
        if mon:
            sets += ["monitoring.serviceMonitor.clientCertificateSecret=prometheus-client"]
    lint = subprocess.run([helm, "lint", chart, "--strict"] + sum((["--set", s] for s in sets), []),
                          capture_output=True, text=True)
    check(f"helm lint --strict ({case})", lint.returncode == 0, lint.stdout + lint.stderr)
    docs = render(sets)
    kinds = [d["kind"] for d in docs]
    by = {}
    for d in docs:
        by.setdefault(d["kind"], []).append(d)
    for k in ["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
              "ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy",
              "ValidatingWebhookConfiguration"]:
        check(f"{case}: renders a {k}", k in kinds, kinds)
    vwc = by["ValidatingWebhookConfiguration"][0]
    every = vwc["webhooks"]
    check(f"{case}: five webhooks", len(every) == 5, [h["name"] for h in every])
    tickets = [h for h in every if h["name"] == "deletion-tickets.warrant.dev"]
    check(f"{case}: DeletionTicket writes go to /admit and fail closed", len(tickets) == 1
          and tickets[0]["failurePolicy"] == "Fail"
          and tickets[0]["rules"][0]["resources"] == ["deletiontickets", "deletiontickets/status"], tickets)
    check(f"{case}: the DeletionTicket CRD", any(c["metadata"]["name"] == "deletiontickets.warrant.dev"
          for c in by.get("CustomResourceDefinition", [])), kinds)
    # The object webhooks: the four of the validation ring's guard.
    hooks = [h for h in every if h["name"] != "deletion-tickets.warrant.dev"]
    check(f"{case}: four object webhooks", len(hooks) == 4, [h["name"] for h in hooks])
    ann = (vwc["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")
    if cm:
        check(f"{case}: the CA is injected by cert-manager", ann == "warrant-system/warrant-serving", ann)
        check(f"{case}: no caBundle to inject over", all("caBundle" not in h["clientConfig"] for h in every))
        certs = {c["metadata"]["name"]: c for c in by.get("Certificate", [])}
        check(f"{case}: serving certificate for the Service", "warrant.warrant-system.svc" in
              certs.get("warrant-serving", {}).get("spec", {}).get("dnsNames", []), list(certs))
        check(f"{case}: the serving Secret is the one mounted",
              certs["warrant-serving"]["spec"]["secretName"] ==
              by["Deployment"][0]["spec"]["template"]["spec"]["volumes"][1]["secret"]["secretName"])
        check(f"{case}: kube-apiserver's client certificate", "warrant-apiserver-client" in certs, list(certs))
        check(f"{case}: Prometheus' client certificate only with monitoring",
              ("warrant-metrics-client" in certs) == mon, list(certs))
        check(f"{case}: issuers", len(by.get("Issuer", [])) == 2)
    else:
        check(f"{case}: no cert-manager objects", "Certificate" not in kinds and "Issuer" not in kinds, kinds)
        check(f"{case}: the given caBundle", all(h["clientConfig"]["caBundle"] == "Q0E=" for h in every))
    for k in ["ServiceMonitor", "PrometheusRule"]:
        check(f"{case}: {k} iff monitoring", (k in kinds) == mon, kinds)
    dash = [c for c in by["ConfigMap"] if c["metadata"]["name"] == "warrant-dashboard"]
    check(f"{case}: dashboard iff monitoring", bool(dash) == mon)
    if mon:
        check(f"{case}: dashboard carries the sidecar label",
              dash[0]["metadata"]["labels"].get("grafana_dashboard") == "1")
        ep = by["ServiceMonitor"][0]["spec"]["endpoints"][0]
        check(f"{case}: ServiceMonitor scrapes https with a client certificate",
              ep["scheme"] == "https" and "cert" in ep["tlsConfig"] and "keySecret" in ep["tlsConfig"], ep)
        alerts = {r["alert"] for g in by["PrometheusRule"][0]["spec"]["groups"] for r in g["rules"]}
        want = {"WarrantWebhookErrors", "WarrantAdmissionLatencyHigh", "WarrantBufferHoldsHigh",
                "WarrantBufferHoldExpired", "WarrantClusterCacheNotReady", "WarrantNoLeader",
                "WarrantAuditRecordsDropped", "WarrantRateLimitDenialsSpiking",
                "WarrantCertificateExpiring"}
        check(f"{case}: the alerts", want <= alerts, want - alerts)
    dep = by["Deployment"][0]["spec"]
    check(f"{case}: HPA iff autoscaling, and then no fixed replicas",
          ("HorizontalPodAutoscaler" in kinds) == hpa and ("replicas" in dep) == (not hpa), (kinds, dep.get("replicas")))
    c = dep["template"]["spec"]["containers"][0]
    check(f"{case}: non-root, read-only root", dep["template"]["spec"]["securityContext"]["runAsNonRoot"]
          and c["securityContext"]["readOnlyRootFilesystem"])
    check(f"{case}: warrant's own account excluded by name",
          "--warrant-service-account=warrant-system/warrant" in c["args"] and
          all("system:serviceaccount:warrant-system:warrant" in h["matchConditions"][0]["expression"] for h in hooks))
    check(f"{case}: the release namespace is excluded from every webhook",
          all("warrant-system" in [v for e in h["namespaceSelector"]["matchExpressions"] for v in e.get("values", [])]
              for h in hooks))

# The remote audit sinks: values onto flags, Secrets and spools onto mounts.
sinks = ["tls.caBundle=Q0E=", "auditSinks.kafka.enabled=true", "auditSinks.kafka.brokers={k1:9093,k2:9093}",
         "auditSinks.kafka.topic=audit", "auditSinks.kafka.tls.enabled=true", "auditSinks.kafka.tls.secret=kafka-tls",
         "auditSinks.kafka.tls.clientCertificate=true", "auditSinks.kafka.sasl.mechanism=SCRAM-SHA-512",
         "auditSinks.kafka.sasl.username=warrant", "auditSinks.kafka.sasl.passwordSecret=kafka-password",
         "auditSinks.kafka.whenFull=Block", "auditSinks.kafka.spool.enabled=true",
         "auditSinks.kafka.spool.maxBytes=104857600",
         "auditSinks.webhook.enabled=true", "auditSinks.webhook.url=https://siem.example.com/in",
         "auditSinks.webhook.tls.secret=siem-ca", "auditSinks.webhook.format=eventlist",
         "auditSinks.webhook.spool.enabled=true",
         "auditSinks.webhook.spool.volume.persistentVolumeClaim.claimName=siem-spool"]
lint = subprocess.run([helm, "lint", chart, "--strict"] + sum((["--set", s] for s in sinks), []),
                      capture_output=True, text=True)
check("helm lint --strict (both audit sinks)", lint.returncode == 0, lint.stdout + lint.stderr)
pod = [d for d in render(sinks) if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]
c = pod["containers"][0]
want = ["--audit-kafka-brokers=k1:9093,k2:9093", "--audit-kafka-topic=audit",
        "--audit-kafka-tls-ca-file=/etc/warrant/audit-kafka/tls/ca.crt",
        "--audit-kafka-tls-cert-file=/etc/warrant/audit-kafka/tls/tls.crt",
        "--audit-kafka-tls-key-file=/etc/warrant/audit-kafka/tls/tls.key",
        "--audit-kafka-sasl-mechanism=SCRAM-SHA-512", "--audit-kafka-sasl-username=warrant",
        "--audit-kafka-sasl-password-file=/etc/warrant/audit-kafka/sasl/password",
        "--audit-kafka-when-full=Block", "--audit-kafka-spool-dir=/var/spool/warrant/kafka",
        "--audit-kafka-spool-max-bytes=104857600",
        "--audit-webhook-url=https://siem.example.com/in",
        "--audit-webhook-ca-file=/etc/warrant/audit-webhook/tls/ca.crt",
        "--audit-webhook-format=eventlist", "--audit-webhook-gzip=true",
        "--audit-webhook-spool-dir=/var/spool/warrant/webhook"]
check("audit sinks: their flags", all(a in c["args"] for a in want), [a for a in want if a not in c["args"]])
check("audit sinks: no client certificate for the webhook unless asked",
      not any(a.startswith("--audit-webhook-client-") for a in c["args"]), c["args"])
mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
for name, path in [("audit-kafka-tls", "/etc/warrant/audit-kafka/tls"), ("audit-kafka-sasl", "/etc/warrant/audit-kafka/sasl"),
                   ("audit-kafka-spool", "/var/spool/warrant/kafka"), ("audit-webhook-tls", "/etc/warrant/audit-webhook/tls"),
                   ("audit-webhook-spool", "/var/spool/warrant/webhook")]:
    check(f"audit sinks: {name} mounted at {path}", mounts.get(name) == path and name in vols, (mounts, list(vols)))
check("audit sinks: the password Secret's key becomes the file",
      vols["audit-kafka-sasl"]["secret"] == {"secretName": "kafka-password", "items": [{"key": "password", "path": "password"}]},
      vols["audit-kafka-sasl"])
check("audit sinks: a spool defaults to an emptyDir a little larger than its bound",
      vols["audit-kafka-spool"].get("emptyDir") == {"sizeLimit": "164Mi"}, vols["audit-kafka-spool"])
check("audit sinks: a spool takes the volume given",
      vols["audit-webhook-spool"].get("persistentVolumeClaim") == {"claimName": "siem-spool"}, vols["audit-webhook-spool"])
check("audit sinks: spools are writable by warrant's group", pod["securityContext"].get("fsGroup") == 65532,
      pod["securityContext"])
check("audit sinks: the root filesystem stays read-only", c["securityContext"]["readOnlyRootFilesystem"])
default_pod = [d for d in render(["tls.caBundle=Q0E="]) if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]
check("audit sinks: off by default", not any(a.startswith("--audit-kafka") or a.startswith("--audit-webhook")
      for a in default_pod["containers"][0]["args"]) and "fsGroup" not in default_pod["securityContext"])
for sets, why in [
        (["auditSinks.kafka.enabled=true"], "auditSinks.kafka.brokers is required"),
        (["auditSinks.kafka.enabled=true", "auditSinks.kafka.brokers={k:9092}", "auditSinks.kafka.sasl.mechanism=PLAIN",
          "auditSinks.kafka.sasl.username=u", "auditSinks.kafka.sasl.passwordSecret=p"], "in the clear"),
        (["auditSinks.kafka.enabled=true", "auditSinks.kafka.brokers={k:9092}", "auditSinks.kafka.tls.enabled=true"],
         "auditSinks.kafka.tls.secret is required"),
        (["auditSinks.webhook.enabled=true", "auditSinks.webhook.url=https://siem.example.com/in"],
         "auditSinks.webhook.tls.secret is required"),
        (["auditSinks.webhook.enabled=true", "auditSinks.webhook.url=http://siem.example.com/in",
          "auditSinks.webhook.tls.secret=s"], "must be an https:// URL")]:
    r = render(["tls.caBundle=Q0E="] + sets, expect_fail=True)
    check(f"audit sinks refused: {why}", r.returncode != 0 and why in r.stderr, r.stderr)

# Refusals.
r = render(["tls.caBundle=Q0E=", "guardNames.protectionLabel=other.example.com/level"], expect_fail=True)
check("a chain whose protectionLabel differs from the webhooks' is refused",
      r.returncode != 0 and "differs from guardNames.protectionLabel" in r.stderr, r.stderr)
r = render([], expect_fail=True)
check("without cert-manager a caBundle is required", r.returncode != 0 and "tls.caBundle" in r.stderr, r.stderr)
r = render(["tls.caBundle=Q0E=", "monitoring.serviceMonitor.enabled=true"], expect_fail=True)
check("a ServiceMonitor without a way to authenticate is refused",
      r.returncode != 0 and "clientCertificateSecret" in r.stderr, r.stderr)

for f in failures:
    print("FAIL " + f)
print(f"chart matrix: {passed} checks held, {len(failures)} did not")
sys.exit(1 if failures else 0)
