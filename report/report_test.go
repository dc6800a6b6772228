package report_test

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/vigia-data/vigia/report"
)

func sample(lang, persona string) report.Report {
	score, dim := 85.0, 92.5
	until := time.Date(2026, 11, 25, 6, 0, 0, 0, time.UTC)
	resolved := until.Add(-48 * time.Hour)
	return report.Report{ID: "r1", Type: report.TypeWorkspaceOverview, Persona: persona, Language: &lang, GeneratedAt: until,
		Facts: report.Facts{Scope: `ops <script>alert(1)</script>`, Since: until.AddDate(0, 0, -30), Until: until, Datasets: 2, Score: &score,
			Trend:      []report.TrendPoint{{Day: until.AddDate(0, 0, -2), Score: 80}, {Day: until.AddDate(0, 0, -1), Score: 85}},
			Dimensions: []report.DimensionFact{{Name: "completude", Score: &dim}, {Name: "atualidade"}},
			Incidents: []report.IncidentFact{{ID: "i1", Severity: "critical", Status: "resolved", Root: "sales.<b>orders</b>", Reach: 3,
				OpenedAt: until.AddDate(0, 0, -5), ResolvedAt: &resolved}},
			TopIssues: []report.IssueFact{{Type: "null_rate", Severity: "critical", Dataset: "sales.orders", Column: "email", Detections: 2}}}}
}

func TestWriteKeepsPortugueseHeadingsInEveryLanguage(t *testing.T) {
	for lang, sentence := range map[string]string{"en": "average quality score is 85.0/100", "es": "puntuación media de calidad es 85,0/100",
		"pt": "pontuação média de qualidade é 85,0/100"} {
		r := sample(lang, report.PersonaExecutive)
		_, md := report.Write(r)
		if !strings.Contains(md, "## Pontuação e tendência") || !strings.Contains(md, "## Decisões de confiança") || !strings.Contains(md, sentence) {
			t.Fatalf("%s:\n%s", lang, md)
		}
		if _, again := report.Write(r); again != md {
			t.Fatalf("%s: not deterministic", lang)
		}
	}
	_, eng := report.Write(sample("en", report.PersonaEngineering))
	if !strings.Contains(eng, "## Dimensões de qualidade") || !strings.Contains(eng, "- atualidade: not computed") ||
		!strings.Contains(eng, "null_rate (critical) on sales.orders.email — 2 detections") || strings.Contains(eng, "## Decisões de confiança") {
		t.Fatalf("engineering:\n%s", eng)
	}
}

func TestHTMLEscapesNamesAndCarriesTheMarker(t *testing.T) {
	r := sample("en", report.PersonaExecutive)
	r.Title, r.ContentMD = report.Write(r)
	page, err := report.HTML(r)
	if err != nil {
		t.Fatal(err)
	}
	s := string(page)
	if strings.Contains(s, "<script>") || strings.Contains(s, "<b>orders") || !strings.Contains(s, `<meta name="ai-generated" content="false">`) ||
		strings.Count(s, "<svg") != 3 || strings.Contains(s, "src=") || strings.Contains(s, `href="http`) {
		t.Fatalf("page:\n%s", s)
	}
}

func TestDeckHasFiveWellFormedSlides(t *testing.T) {
	r := sample("pt", report.PersonaExecutive)
	r.Title, r.ContentMD = report.Write(r)
	deck, err := report.Deck(r)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(deck), int64(len(deck)))
	if err != nil {
		t.Fatal(err)
	}
	slides := 0
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(rc)
		rc.Close()
		if strings.HasSuffix(f.Name, ".xml") || strings.HasSuffix(f.Name, ".rels") {
			dec := xml.NewDecoder(bytes.NewReader(body))
			for {
				if _, err := dec.Token(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
			}
		}
		if strings.HasPrefix(f.Name, "ppt/slides/slide") {
			slides++
			if !strings.Contains(string(body), "ai-generated: false") {
				t.Fatalf("%s has no marker", f.Name)
			}
		}
	}
	if slides != report.DeckSlides {
		t.Fatalf("%d slides", slides)
	}
	again, _ := report.Deck(r)
	if !bytes.Equal(deck, again) {
		t.Fatal("deck not deterministic")
	}
}
