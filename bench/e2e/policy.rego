# The Rego twin of bench/e2e/warrant-policy.yaml, served by OPA's Data API v0 at
# /v0/data/k8s/authz/decision as OPA's Kubernetes authorization webhook example does (package
# k8s.authz, a `decision` document that is the SubjectAccessReview answered).
#
# Semantics kept from warrant's Policy (src/authorizer/policy.rs): when the 3 matchConditions
# hold, any matching Deny rule denies (the first in file order gives the reason), else any
# matching Allow rule allows (the first in file order gives the reason), else no opinion; when a
# matchCondition fails the authorizer is skipped, and with no other authorizer that is no
# opinion. Reasons are warrant's: "<authorizer>/<rule>: <message>". bench/run.sh checks that both
# servers give the same decision and reason for every review before it times anything.
package k8s.authz

import rego.v1

spec := input.spec

ra := spec.resourceAttributes

# CEL sees an absent user or groups field as its zero value ("" or []); in Rego an absent field
# is undefined, and `not` over an undefined reference is undefined too, so default them here.
user := object.get(spec, "user", "")

groups := object.get(spec, "groups", [])

# The Policy's matchConditions.
applies if {
	spec.resourceAttributes
	not "system:masters" in groups
	not startswith(user, "system:")
}

deny_matches contains 0 if {
	ra.namespace == "ns-0"
	ra.verb == "delete"
}

allow_matches contains 1 if "team-1" in groups

deny_matches contains 2 if {
	ra.namespace == "ns-2"
	ra.verb == "delete"
}

allow_matches contains 3 if "team-3" in groups

deny_matches contains 4 if {
	ra.namespace == "ns-4"
	ra.verb == "delete"
}

allow_matches contains 5 if "team-5" in groups

deny_matches contains 6 if {
	ra.namespace == "ns-6"
	ra.verb == "delete"
}

allow_matches contains 7 if "team-7" in groups

deny_matches contains 8 if {
	ra.namespace == "ns-8"
	ra.verb == "delete"
}

allow_matches contains 9 if "team-9" in groups

deny_matches contains 10 if {
	ra.namespace == "ns-10"
	ra.verb == "delete"
}

allow_matches contains 11 if "team-11" in groups

deny_matches contains 12 if {
	ra.namespace == "ns-12"
	ra.verb == "delete"
}

allow_matches contains 13 if "team-13" in groups

deny_matches contains 14 if {
	ra.namespace == "ns-14"
	ra.verb == "delete"
}

allow_matches contains 15 if "team-15" in groups

deny_matches contains 16 if {
	ra.namespace == "ns-16"
	ra.verb == "delete"
}

allow_matches contains 17 if "team-17" in groups

deny_matches contains 18 if {
	ra.namespace == "ns-18"
	ra.verb == "delete"
}

allow_matches contains 19 if {
	startswith(user, "owner-")
	ra.resource in {"deployments", "pods"}
}

reasons := [
	"bench/rule-0: rule 0",
	"bench/rule-1: rule 1",
	"bench/rule-2: rule 2",
	"bench/rule-3: rule 3",
	"bench/rule-4: rule 4",
	"bench/rule-5: rule 5",
	"bench/rule-6: rule 6",
	"bench/rule-7: rule 7",
	"bench/rule-8: rule 8",
	"bench/rule-9: rule 9",
	"bench/rule-10: rule 10",
	"bench/rule-11: rule 11",
	"bench/rule-12: rule 12",
	"bench/rule-13: rule 13",
	"bench/rule-14: rule 14",
	"bench/rule-15: rule 15",
	"bench/rule-16: rule 16",
	"bench/rule-17: rule 17",
	"bench/rule-18: rule 18",
	"bench/owners: owners may act",
]

default status := {"allowed": false}

status := {"allowed": false, "denied": true, "reason": reasons[min(deny_matches)]} if {
	applies
	count(deny_matches) > 0
} else := {"allowed": true, "reason": reasons[min(allow_matches)]} if {
	applies
	count(allow_matches) > 0
}

decision := {
	"apiVersion": input.apiVersion,
	"kind": "SubjectAccessReview",
	"status": status,
}
