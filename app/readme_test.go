package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

// Dataset READMEs (issue 18): the draft is written from facts (columns with types,
// semantic types and sensitivity, quality), edited and published by a session; the
// Markdown export is the published text without AI front matter; nothing is AI-generated.
func TestReadmeDraftEditPublish(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	ws := env.MustWorkspace(t, "readme")
	token := env.MustToken(t, ws)
	member := env.MustSession(t, ws, vigia.RoleMember)
	ds := env.MustDataset(t, ws, env.MustConnection(t, ws, "warehouse"), "crm", "clientes")
	type readmeOut struct {
		ContentMD            string  `json:"content_md"`
		Edited               bool    `json:"edited"`
		EditedBy             *string `json:"edited_by"`
		AIGenerated          bool    `json:"ai_generated"`
		AIModel              *string `json:"ai_model"`
		GeneratedAt          *string `json:"generated_at"`
		PublishedMD          *string `json:"published_md"`
		PublishedAt          *string `json:"published_at"`
		PublishedAIGenerated bool    `json:"published_ai_generated"`
	}
	var r readmeOut
	res := env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/readme", token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("readme: %d %s", res.Status, res.Body)
	}
	res.JSON(t, &r)
	for _, want := range []string{"# crm.clientes", "| telefone | text | phone_pt | pii |", "| id (chave primária) | integer | — | internal |",
		"Pontuação mais recente: 87.5/100.", "Sem responsável definido."} {
		if !strings.Contains(r.ContentMD, want) {
			t.Fatalf("draft lacks %q:\n%s", want, r.ContentMD)
		}
	}
	if r.AIGenerated || r.AIModel != nil || r.Edited || r.GeneratedAt == nil || r.PublishedMD != nil {
		t.Fatalf("fresh draft: %+v", r)
	}
	md := env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/readme.md", token, nil)
	if md.Status != http.StatusOK || string(md.Body) != r.ContentMD || strings.HasPrefix(string(md.Body), "---") ||
		!strings.HasPrefix(md.Header.Get("Content-Type"), "text/markdown") {
		t.Fatalf("draft export: %d %s", md.Status, md.Body)
	}

	if res := env.Do(t, http.MethodPut, "/api/v1/datasets/"+ds+"/readme", token, map[string]any{"content_md": "x"}); res.Status != http.StatusForbidden {
		t.Fatalf("token edit: %d", res.Status)
	}
	edited := r.ContentMD + "\nNota: os telefones vêm do CRM antigo.\n"
	res = env.Do(t, http.MethodPut, "/api/v1/datasets/"+ds+"/readme", member, map[string]any{"content_md": edited})
	res.JSON(t, &r)
	if res.Status != http.StatusOK || r.ContentMD != edited || !r.Edited || r.EditedBy == nil || r.GeneratedAt != nil || r.PublishedMD != nil {
		t.Fatalf("edited: %d %s", res.Status, res.Body)
	}
	res = env.Do(t, http.MethodPost, "/api/v1/datasets/"+ds+"/readme/publish", member, nil)
	res.JSON(t, &r)
	if res.Status != http.StatusOK || r.PublishedMD == nil || *r.PublishedMD != edited || r.PublishedAt == nil || r.PublishedAIGenerated {
		t.Fatalf("published: %d %s", res.Status, res.Body)
	}
	// A later edit changes the draft, not the published text the export gives.
	env.Do(t, http.MethodPut, "/api/v1/datasets/"+ds+"/readme", member, map[string]any{"content_md": "# rascunho novo\n"})
	md = env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/readme.md", token, nil)
	if string(md.Body) != edited {
		t.Fatalf("export after a new draft: %s", md.Body)
	}
	other := env.MustWorkspace(t, "readme-other")
	if res := env.Do(t, http.MethodGet, "/api/v1/datasets/"+ds+"/readme.md", env.MustToken(t, other), nil); res.Status != http.StatusNotFound {
		t.Fatalf("foreign dataset: %d", res.Status)
	}
}
