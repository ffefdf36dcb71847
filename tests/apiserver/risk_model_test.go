package apiserver

// The risk model, as our users wrote it, in Go: the tests compute the score, level
// and reasons they expect from it instead of copying numbers out of warrant's answers. The
// weights and thresholds are the guard's defaults (riskWeights and riskThresholds unset in the
// chain files of these tests).

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type riskModel struct {
	critical, high, namespaceDeletion int
	manyPods, manyPodsAt, somePods    int
	ingress, boundVolumes             int
	businessHours                     int
	qpsPerPod                         int
	// Thresholds: LOW < medium <= MEDIUM < high <= HIGH < critical <= CRITICAL.
	medium, highAt, criticalAt int
}

// usersModel: critical +40, high +20 (the namespace's side and the object's side add up); Namespace deletion +30; running pods >= 20 -> +20, else
// > 0 -> +10; an Ingress reaching the target +15 (120 QPS per pod it reaches); bound volumes
// +20; business hours +10; LOW < 25 <= MEDIUM < 50 <= HIGH < 80 <= CRITICAL.
var usersModel = riskModel{
	critical: 40, high: 20, namespaceDeletion: 30,
	manyPods: 20, manyPodsAt: 20, somePods: 10,
	ingress: 15, boundVolumes: 20, businessHours: 10, qpsPerPod: 120,
	medium: 25, highAt: 50, criticalAt: 80,
}

// side is one side of a target's protection, namespace or object: its level ("critical",
// "high", "standard"; "" unprotected) and a fragment of the reason naming its source.
type side struct{ level, source string }

// exposure is what the model scores: the target's protection, whose namespace and object sides
// add up, and what deleting it takes down.
type exposure struct {
	namespace, object side
	namespaceDeletion bool // the target is a Namespace being deleted
	pods              int  // running pods affected
	ingresses         []string
	ingressPods       int // pods an Ingress reaches
	volumes           int // bound PersistentVolumeClaims affected
	inBusiness        bool
}

// factor is one reason the score is made of: its points and fragments its text must carry.
type factor struct {
	points   int
	mentions []string
}

// expected is the model's verdict on an exposure.
type expected struct {
	score   int
	level   string
	factors []factor
	qps     int
}

func (m riskModel) assess(x exposure) expected {
	var fs []factor
	for _, sd := range []side{x.namespace, x.object} {
		switch sd.level {
		case "critical":
			fs = append(fs, factor{m.critical, []string{"critical", sd.source}})
		case "high":
			fs = append(fs, factor{m.high, []string{"high", sd.source}})
		case "standard":
			fs = append(fs, factor{0, []string{"standard", sd.source}})
		}
	}
	if x.namespaceDeletion {
		fs = append(fs, factor{m.namespaceDeletion, []string{"namespace deletion"}})
	}
	switch {
	case x.pods >= m.manyPodsAt:
		fs = append(fs, factor{m.manyPods, []string{fmt.Sprintf("%d running pods", x.pods)}})
	case x.pods > 0:
		fs = append(fs, factor{m.somePods, []string{fmt.Sprintf("%d running pods", x.pods)}})
	}
	qps := x.ingressPods * m.qpsPerPod
	if len(x.ingresses) > 0 {
		fs = append(fs, factor{m.ingress, []string{"ingress " + x.ingresses[0], fmt.Sprintf("%d QPS", qps)}})
	}
	if x.volumes > 0 {
		fs = append(fs, factor{m.boundVolumes, []string{fmt.Sprintf("%d bound volume", x.volumes)}})
	}
	if x.inBusiness {
		fs = append(fs, factor{m.businessHours, []string{"business hours"}})
	}
	score := 0
	for _, f := range fs {
		score += f.points
	}
	return expected{score: score, level: m.grade(score), factors: fs, qps: qps}
}

func (m riskModel) grade(score int) string {
	switch {
	case score >= m.criticalAt:
		return "CRITICAL"
	case score >= m.highAt:
		return "HIGH"
	case score >= m.medium:
		return "MEDIUM"
	}
	return "LOW"
}

// check compares warrant's assessment with the model's: score, level, and one reason per
// factor, each ending in its points and naming what it counts.
func (x expected) check(t *testing.T, g *guardReport) {
	t.Helper()
	if g.RiskScore != x.score || g.RiskLevel != x.level {
		t.Fatalf("risk: warrant says %s %d, the model %s %d; warrant's reasons: %q", g.RiskLevel, g.RiskScore, x.level, x.score, g.RiskReasons)
	}
	if len(g.RiskReasons) != len(x.factors) {
		t.Fatalf("warrant gives %d reasons %q, the model %d factors %+v", len(g.RiskReasons), g.RiskReasons, len(x.factors), x.factors)
	}
	used := make([]bool, len(g.RiskReasons))
	for _, f := range x.factors {
		found := false
		for i, r := range g.RiskReasons {
			if used[i] || !strings.HasSuffix(r, fmt.Sprintf(" +%d", f.points)) {
				continue
			}
			all := true
			for _, m := range f.mentions {
				all = all && strings.Contains(r, m)
			}
			if all {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Fatalf("no reason for the model's factor %+v among %q", f, g.RiskReasons)
		}
	}
}

// minuteOfDay is t's minute of the day in UTC (the guards in these tests read business hours
// in UTC).
func minuteOfDay(t time.Time) int {
	u := t.UTC()
	return u.Hour()*60 + u.Minute()
}

// hhmm is the minute of the day of "HH:MM".
func hhmm(s string) int {
	var h, m int
	if _, err := fmt.Sscanf(s, "%d:%d", &h, &m); err != nil {
		panic(err)
	}
	return h*60 + m
}

// within says whether t (UTC) is inside the daily window [start, end).
func within(t time.Time, start, end string) bool {
	m := minuteOfDay(t)
	return m >= hhmm(start) && m < hhmm(end)
}
