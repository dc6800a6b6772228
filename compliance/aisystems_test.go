package compliance_test

import (
	"slices"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/compliance"
)

func TestBuildRegisterMergesByNameAndCountsHiddenDatasets(t *testing.T) {
	ws := vigia.NewID()
	regs := []compliance.RegisteredSystem{{ID: "r1", Name: "Triagem", RiskCategory: compliance.RiskHigh, IntendedPurpose: "x", CreatedAt: time.Now()}}
	links := []compliance.SystemLink{
		{SystemName: "triagem", DatasetID: "a", Use: compliance.UseInput, Origin: compliance.OriginDomainConsumer, Via: "domain:d"},
		{SystemID: "r1", SystemName: "Triagem", DatasetID: "a", Use: compliance.UseTraining, Origin: compliance.OriginRegistered},
		{SystemName: "bot", DatasetID: "hidden", Use: compliance.UseRetrieval, Origin: compliance.OriginConsumption},
	}
	visible := map[string]compliance.Dataset{"a": {DatasetFacts: compliance.DatasetFacts{ID: "a", Name: "public.a"}}}
	got := compliance.BuildRegister(ws, regs, links, visible)
	if len(got) != 2 || got[0].Name != "bot" || got[1].ID != "r1" {
		t.Fatalf("%+v", got)
	}
	bot, tri := got[0], got[1]
	if bot.ID != compliance.SystemID(ws, "BOT") || bot.HiddenDatasets != 1 || len(bot.Datasets) != 0 ||
		!slices.Contains(bot.Gaps, compliance.GapRestrictedDatasets) || slices.Contains(bot.Gaps, compliance.GapNoDatasets) {
		t.Fatalf("bot %+v", bot)
	}
	if len(tri.Datasets) != 1 || !slices.Equal(tri.Datasets[0].Uses, []string{"input", "training"}) ||
		!slices.Equal(tri.Origins, []string{"domain_consumer", "registered"}) ||
		!slices.Equal(tri.Gaps, []string{compliance.GapTrainingNotProfiled}) {
		t.Fatalf("triagem %+v", tri)
	}
	if !vigia.ValidID(compliance.SystemID(ws, "bot")) {
		t.Fatal("derived id is no id")
	}
}

func TestJudgeSaudePTStatuses(t *testing.T) {
	now := time.Now()
	us := "US"
	facts := []compliance.DatasetFacts{
		{ID: "1", Name: "a", Profiled: true, RuleCount: 2, Upstream: 1, Domains: []string{"x"}, LastProfiledAt: &now},
		{ID: "2", Name: "b", DataCountry: &us},
	}
	reqs := compliance.JudgeSaudePT(facts, compliance.PolicyFacts{}, now)
	want := map[string]string{"SPT-01": "Parcial", "SPT-02": "Não aplicável", "SPT-03": "Não aplicável", "SPT-04": "Parcial",
		"SPT-05": "Parcial", "SPT-06": "Não aplicável", "SPT-07": "Em falta", "SPT-08": "Parcial", "SPT-09": "Parcial", "SPT-10": "Não aplicável"}
	if len(reqs) != len(want) {
		t.Fatalf("%d requirements", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != want[r.ID] {
			t.Errorf("%s: %s, want %s", r.ID, r.Status, want[r.ID])
		}
	}
	if got := compliance.JudgeSaudePT(nil, compliance.PolicyFacts{}, now); got[0].Status != "Não aplicável" {
		t.Errorf("no datasets: %s", got[0].Status)
	}
}
