#!/usr/bin/env bash
# The chart's PrometheusRule: promtool (Debian's prometheus package, installed when missing)
# checks the rules and runs alerts.test.yaml, a unit test for every alert.
# Usage: tests/monitoring/check.sh   (HELM: the helm binary; default: tests/chart/build-helm.sh)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
start=$(date +%s)
if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1; then
  echo "== apt-get install prometheus (promtool, prometheus)"
  t=$(date +%s)
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
  echo "installed in $(( $(date +%s) - t ))s"
fi
promtool --version 2>&1 | sed -n 1p
helm="${HELM:-$("$root/tests/chart/build-helm.sh")}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$helm" template warrant "$root/charts/warrant" --namespace warrant-system \
  --set tls.certManager.enabled=true --set monitoring.prometheusRule.enabled=true \
  --show-only templates/prometheusrule.yaml > "$work/prometheusrule.yaml"
python3 - "$work/prometheusrule.yaml" "$work/rules.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
yaml.safe_dump({"groups": doc["spec"]["groups"]}, open(sys.argv[2], "w"), sort_keys=False)
PY
cp "$here/alerts.test.yaml" "$work/"
promtool check rules "$work/rules.yaml"
# Every alert of the rule file has a test that fires it.
python3 - "$work/rules.yaml" "$work/alerts.test.yaml" <<'PY'
import sys, yaml
alerts = {r["alert"] for g in yaml.safe_load(open(sys.argv[1]))["groups"] for r in g["rules"] if "alert" in r}
tests = yaml.safe_load(open(sys.argv[2]))["tests"]
fired = {t["alertname"] for c in tests for t in c.get("alert_rule_test", []) if t.get("exp_alerts")}
quiet = {t["alertname"] for c in tests for t in c.get("alert_rule_test", []) if not t.get("exp_alerts")}
missing = sorted((alerts - fired) | (alerts - quiet))
if missing:
    sys.exit("alerts without a firing and a quiet test: " + ", ".join(missing))
print(f"{len(alerts)} alerts, each with a firing and a quiet test")
PY
promtool test rules "$work/alerts.test.yaml"
echo "monitoring rules check took $(( $(date +%s) - start ))s"
