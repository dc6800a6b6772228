package rest

import (
	"context"
	"net/http"
	"time"
)

// HealthOut is the liveness answer.
type HealthOut struct {
	Status string `json:"status" enum:"ok"`
}

// VersionOut names the running build.
type VersionOut struct {
	Version    string `json:"version"`
	BuildSHA   string `json:"build_sha" pattern:"^[0-9a-f]{7}$"`
	APIVersion string `json:"api_version"`
}

// ReadyOut is the readiness answer: the database is required, the broker only reported.
type ReadyOut struct {
	Status   string `json:"status" enum:"ready,not_ready"`
	Database string `json:"database" enum:"ok,unavailable"`
	Broker   string `json:"broker" doc:"ok, unavailable or not_configured; reported only"`
	Draining bool   `json:"draining"`
}

func (s *Server) healthRoutes() {
	s.register(operation{ID: "health", Method: http.MethodGet, Path: "/api/v1/health", Tag: "health", Public: true, Probe: true,
		Summary: "Liveness", Response: HealthOut{}}, s.handleHealth)
	s.register(operation{ID: "version", Method: http.MethodGet, Path: "/api/v1/version", Tag: "health", Public: true, Probe: true,
		Summary: "Version of the running build", Response: VersionOut{}}, s.handleVersion)
	s.register(operation{ID: "ready", Method: http.MethodGet, Path: "/api/v1/health/ready", Tag: "health", Public: true, Probe: true,
		Summary:  "Readiness: 503 while the database is unreachable or the server is draining",
		Response: ReadyOut{}, Also: map[int]alsoAnswer{http.StatusServiceUnavailable: {
			Desc: "Not ready: the database is unreachable or the server is draining", Body: ReadyOut{}}}}, s.handleReady)
	s.register(operation{ID: "openapi", Method: http.MethodGet, Path: "/api/v1/openapi.json", Tag: "health", Public: true,
		Summary: "This OpenAPI 3.1 document", Response: map[string]any{}}, s.handleOpenAPI)
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ *input) {
	writeJSON(w, http.StatusOK, HealthOut{Status: "ok"})
}

func (s *Server) handleVersion(w http.ResponseWriter, r *http.Request, _ *input) {
	writeJSON(w, http.StatusOK, VersionOut{Version: s.cfg.Version, BuildSHA: s.cfg.BuildSHA, APIVersion: APIVersion})
}

func (s *Server) handleReady(w http.ResponseWriter, r *http.Request, _ *input) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	out := ReadyOut{Status: "ready", Database: "ok", Broker: "not_configured", Draining: s.draining.Load()}
	if s.deps.Database == nil || s.deps.Database(ctx) != nil {
		out.Database = "unavailable"
	}
	if s.deps.Broker != nil {
		out.Broker = s.deps.Broker(ctx)
	}
	status := http.StatusOK
	if out.Database != "ok" || out.Draining {
		out.Status = "not_ready"
		status = http.StatusServiceUnavailable
	}
	writeJSON(w, status, out)
}

func (s *Server) handleOpenAPI(w http.ResponseWriter, r *http.Request, _ *input) {
	doc, err := s.OpenAPI()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(doc)
}
