package app_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/app"
	"github.com/vigia-data/vigia/app/apptest"
)

type sensitivityOut struct {
	Columns []struct {
		Column     string  `json:"column"`
		Level      string  `json:"level"`
		Origin     string  `json:"origin"`
		Reason     *string `json:"reason"`
		Author     *string `json:"author"`
		SetAt      *string `json:"set_at"`
		Suggestion *struct {
			Level  string `json:"level"`
			Origin string `json:"origin"`
			From   []struct {
				DatasetID *string `json:"dataset_id"`
				Column    *string `json:"column"`
				Level     string  `json:"level"`
			} `json:"from"`
		} `json:"suggestion"`
	} `json:"columns"`
	Trail []struct {
		Column string    `json:"column"`
		From   *string   `json:"from"`
		To     string    `json:"to"`
		Author string    `json:"author"`
		At     time.Time `json:"at"`
	} `json:"trail"`
}

// Must-show 3 of issue 18: a view column derived (through the view's SQL) from a PII
// column gets an inherited PII suggestion; a manual change is in the trail with its
// author and date, and the manual level replaces the suggestion.
func TestSensitivityInheritedAndManual(t *testing.T) {
	env := apptest.MustStart(t, app.Config{})
	le := newLineageEnv(t, env, `
		CREATE TABLE clientes (id int PRIMARY KEY, email text, pais text);
		INSERT INTO clientes SELECT i, 'cliente' || i || '@example.pt', 'PT' FROM generate_series(1, 40) i;
		CREATE VIEW contactos AS SELECT id, md5(email) AS chave_contacto, pais FROM clientes;`)
	le.scan(t)
	clientes, contactos := le.ids["clientes"], le.ids["contactos"]
	member := env.MustSession(t, le.ws, vigia.RoleMember)
	col := func(s sensitivityOut, name string) int {
		for i, c := range s.Columns {
			if c.Column == name {
				return i
			}
		}
		t.Fatalf("no column %s in %+v", name, s)
		return -1
	}
	var s sensitivityOut
	le.get(t, "/api/v1/datasets/"+clientes+"/sensitivity", le.tok, &s)
	if c := s.Columns[col(s, "email")]; c.Level != "pii" || c.Origin != "auto" || c.Reason == nil || c.Author != nil {
		t.Fatalf("clientes.email: %+v", c)
	}
	if c := s.Columns[col(s, "pais")]; c.Level != "internal" || c.Suggestion != nil {
		t.Fatalf("clientes.pais: %+v", c)
	}

	le.get(t, "/api/v1/datasets/"+contactos+"/sensitivity", le.tok, &s)
	c := s.Columns[col(s, "chave_contacto")]
	if c.Level != "internal" || c.Origin != "auto" || c.Suggestion == nil || c.Suggestion.Level != "pii" || c.Suggestion.Origin != "lineage" ||
		len(c.Suggestion.From) != 1 || *c.Suggestion.From[0].DatasetID != clientes || *c.Suggestion.From[0].Column != "email" {
		t.Fatalf("derived column: %+v", c)
	}
	if c := s.Columns[col(s, "pais")]; c.Suggestion != nil {
		t.Fatalf("pais derived from a non-PII column: %+v", c)
	}
	if len(s.Trail) != 0 {
		t.Fatalf("trail before any change: %+v", s.Trail)
	}

	// A session sets the level; the trail has the change with author and date.
	put := func(cred, column, level string) *apptest.Response {
		t.Helper()
		return env.Do(t, http.MethodPut, "/api/v1/datasets/"+contactos+"/sensitivity/"+column, cred, map[string]any{"level": level})
	}
	if r := put(le.tok, "chave_contacto", "pii"); r.Status != http.StatusForbidden {
		t.Fatalf("token write: %d", r.Status)
	}
	if r := put(member, "nope", "pii"); r.Status != http.StatusNotFound {
		t.Fatalf("unknown column: %d", r.Status)
	}
	if r := put(member, "chave_contacto", "secret"); r.Status != http.StatusUnprocessableEntity {
		t.Fatalf("bad level: %d", r.Status)
	}
	r := put(member, "chave_contacto", "confidential")
	if r.Status != http.StatusOK {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &s)
	c = s.Columns[col(s, "chave_contacto")]
	if c.Level != "confidential" || c.Origin != "manual" || c.Author == nil || *c.Author == "" || c.SetAt == nil || c.Suggestion != nil {
		t.Fatalf("manual level: %+v", c)
	}
	if len(s.Trail) != 1 || s.Trail[0].Column != "chave_contacto" || s.Trail[0].From != nil || s.Trail[0].To != "confidential" ||
		s.Trail[0].Author != *c.Author || s.Trail[0].At.IsZero() {
		t.Fatalf("trail: %+v", s.Trail)
	}
	// The same level again adds nothing; pii then auto add two entries.
	put(member, "chave_contacto", "confidential")
	put(member, "chave_contacto", "pii")
	r = put(member, "chave_contacto", "auto")
	r.JSON(t, &s)
	if len(s.Trail) != 3 || *s.Trail[1].From != "confidential" || s.Trail[1].To != "pii" || *s.Trail[2].From != "pii" || s.Trail[2].To != "auto" {
		t.Fatalf("trail after changes: %+v", s.Trail)
	}
	if c := s.Columns[col(s, "chave_contacto")]; c.Origin != "auto" || c.Suggestion == nil {
		t.Fatalf("back to auto: %+v", c)
	}

	// Another workspace's dataset is 404.
	other := env.MustWorkspace(t, "sens-other")
	if r := env.Do(t, http.MethodGet, "/api/v1/datasets/"+contactos+"/sensitivity", env.MustToken(t, other), nil); r.Status != http.StatusNotFound {
		t.Fatalf("foreign dataset: %d", r.Status)
	}
}
