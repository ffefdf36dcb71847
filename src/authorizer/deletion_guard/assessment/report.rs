//! The report an admission answer carries in its `report` audit annotation, written by hand in
//! the order and shape of [`Assessment`]'s `Serialize` (the audit record's), escaped as it is
//! written: every admission answer carries one, and serde's field-by-field escaping was most of
//! the cost of writing it. The rare parts (`traffic`, `unusual`) are written by serde.

use super::{Assessment, ImpactReport};
use crate::review::JsonText;

impl Assessment {
    /// Writes the report: the text `serde_json` writes for `self`.
    pub(crate) fn write_report(&self, t: &mut JsonText) {
        t.begin_object();
        t.field("mode");
        t.value(&self.mode);
        t.field("code");
        t.string(&self.audit_code);
        t.field("riskScore");
        t.unsigned(u64::from(self.risk_score));
        t.field("riskLevel");
        t.value(&self.risk_level);
        if let Some(protection) = self.protection {
            t.field("protection");
            t.value(&protection);
        }
        t.field("riskReasons");
        t.strings(&self.risk_reasons);
        if let Some(ticket) = &self.ticket {
            t.field("ticket");
            t.string(ticket);
        }
        if self.single_use_ticket {
            t.field("singleUseTicket");
            t.boolean(true);
        }
        if let Some(impact) = &self.impact {
            t.field("impact");
            impact.write(t);
        }
        if let Some(unusual) = &self.unusual {
            t.field("unusual");
            t.value(unusual);
        }
        t.end_object();
    }
}

impl ImpactReport {
    fn write(&self, t: &mut JsonText) {
        let count = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        t.begin_object();
        t.field("target");
        t.string(&self.target);
        t.field("runningPods");
        t.unsigned(u64::from(self.running_pods));
        t.field("services");
        t.strings(&self.services);
        t.field("serviceCount");
        t.unsigned(count(self.service_count));
        t.field("ingresses");
        t.strings(&self.ingresses);
        t.field("ingressCount");
        t.unsigned(count(self.ingress_count));
        t.field("boundVolumes");
        t.strings(&self.bound_volumes);
        t.field("boundVolumeCount");
        t.unsigned(count(self.bound_volume_count));
        t.field("estimatedQps");
        t.unsigned(self.estimated_qps);
        t.field("traffic");
        t.value(&self.traffic);
        t.end_object();
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Assessment, GuardCode, ImpactReport, RiskLevel, UnusualReport};
    use crate::authorizer::deletion_guard::traffic::{Fallback, Traffic, TrafficSource};
    use crate::config::model::guard::{Level, Mode};
    use crate::config::model::unusual::UnusualAction;
    use crate::review::{JsonText, embedded_json};
    use proptest::prelude::*;

    fn names() -> impl Strategy<Value = Vec<String>> {
        prop::collection::vec(any::<String>(), 0..3)
    }

    fn traffic() -> impl Strategy<Value = Traffic> {
        let fallback = (
            prop::sample::select(vec!["timeout", "status"]),
            any::<String>(),
        )
            .prop_map(|(reason, message)| Fallback { reason, message });
        (
            any::<bool>(),
            any::<f64>().prop_filter("finite", |v| v.is_finite()),
            prop::option::of(any::<String>()),
            prop::option::of(fallback),
        )
            .prop_map(|(live, rps, query, fallback)| Traffic {
                source: if live {
                    TrafficSource::Prometheus
                } else {
                    TrafficSource::Estimate
                },
                requests_per_second: rps,
                query,
                fallback,
            })
    }

    fn impact() -> impl Strategy<Value = ImpactReport> {
        (
            any::<String>(),
            any::<u32>(),
            (names(), names(), names()),
            (any::<usize>(), any::<usize>(), any::<usize>()),
            any::<u64>(),
            traffic(),
        )
            .prop_map(|(target, pods, (s, i, b), (sc, ic, bc), qps, traffic)| {
                ImpactReport {
                    target,
                    running_pods: pods,
                    services: s,
                    service_count: sc,
                    ingresses: i,
                    ingress_count: ic,
                    bound_volumes: b,
                    bound_volume_count: bc,
                    estimated_qps: qps,
                    traffic,
                }
            })
    }

    fn unusual() -> impl Strategy<Value = UnusualReport> {
        let finite = || any::<f64>().prop_filter("finite", |v| v.is_finite());
        (any::<bool>(), finite(), finite(), finite(), any::<u64>()).prop_map(
            |(deny, in_window, baseline_per_hour, threshold, window_seconds)| UnusualReport {
                action: if deny {
                    UnusualAction::Deny
                } else {
                    UnusualAction::RequireTicket
                },
                in_window,
                baseline_per_hour,
                threshold,
                window_seconds,
            },
        )
    }

    fn assessment() -> impl Strategy<Value = Assessment> {
        let level = prop::sample::select(vec![Level::Standard, Level::High, Level::Critical]);
        let risk = prop::sample::select(vec![
            RiskLevel::Low,
            RiskLevel::Medium,
            RiskLevel::High,
            RiskLevel::Critical,
        ]);
        (
            (any::<bool>(), any::<String>(), any::<u32>(), risk),
            (
                prop::option::of(level),
                names(),
                prop::option::of(any::<String>()),
            ),
            (
                any::<bool>(),
                prop::option::of(impact()),
                prop::option::of(unusual()),
            ),
        )
            .prop_map(
                |(
                    (observe, code, score, risk),
                    (protection, reasons, ticket),
                    (single, impact, unusual),
                )| {
                    Assessment {
                        mode: if observe {
                            Mode::Observe
                        } else {
                            Mode::Enforce
                        },
                        code: GuardCode::MissingTicket,
                        audit_code: code,
                        risk_score: score,
                        risk_level: risk,
                        protection,
                        risk_reasons: reasons,
                        ticket,
                        single_use_ticket: single,
                        impact,
                        unusual,
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn the_report_is_the_escaped_text_serde_writes_for_the_assessment(a in assessment()) {
            let mut t = JsonText::embedded(0);
            a.write_report(&mut t);
            prop_assert_eq!(t.into_string(), embedded_json(&a).unwrap());
        }
    }
}
