package rest

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/i18n"
	"github.com/vigia-data/vigia/identity"
)

// WorkspaceLocaleOut is the workspace's default locale and time zone.
type WorkspaceLocaleOut struct {
	Locale          *string `json:"locale" enum:"pt-PT,pt-BR,en-GB,en-US,es-ES,de-CH,fr-CH" doc:"The default locale; null when not set"`
	EffectiveLocale string  `json:"effective_locale" doc:"The locale in use: the default, else pt-PT"`
	Timezone        string  `json:"timezone" doc:"IANA time zone the workspace's days are read in"`
}

// WorkspaceLocaleIn replaces the workspace's default locale and time zone.
type WorkspaceLocaleIn struct {
	Locale   json.RawMessage `json:"locale,omitempty" doc:"pt-PT, pt-BR, en-GB, en-US, es-ES, de-CH or fr-CH; null or absent: none (pt-PT applies)"`
	Timezone string          `json:"timezone" maxLength:"64" doc:"IANA time zone, e.g. Europe/Lisbon"`
}

// WorkspaceCurrencyOut is the workspace's currency.
type WorkspaceCurrencyOut struct {
	Currency string `json:"currency" enum:"EUR,USD,GBP,CHF,BRL" doc:"The currency in use (EUR when none is set)"`
	Default  bool   `json:"default" doc:"True when no currency is set and EUR applies"`
}

// WorkspaceCurrencyIn sets the workspace's currency.
type WorkspaceCurrencyIn struct {
	Currency json.RawMessage `json:"currency" doc:"EUR, USD, GBP, CHF or BRL; null: EUR"`
}

// AccountOut is the calling person's account.
type AccountOut struct {
	ID                string  `json:"id"`
	Email             string  `json:"email"`
	Role              string  `json:"role" enum:"admin,member,viewer"`
	WorkspaceID       string  `json:"workspace_id"`
	WorkspaceName     string  `json:"workspace_name"`
	Plan              string  `json:"plan" enum:"free,team,business" doc:"The workspace's plan"`
	Locale            *string `json:"locale" enum:"pt-PT,pt-BR,en-GB,en-US,es-ES,de-CH,fr-CH" doc:"The person's locale; null: the workspace default"`
	Timezone          *string `json:"timezone" doc:"The person's IANA time zone; null: the workspace's"`
	EffectiveLocale   string  `json:"effective_locale" doc:"The person's locale, else the workspace default, else pt-PT"`
	EffectiveTimezone string  `json:"effective_timezone"`
	WorkspaceLocale   *string `json:"workspace_locale" doc:"The workspace default locale; null when not set"`
	WorkspaceTimezone string  `json:"workspace_timezone"`
	ResponseLanguage  string  `json:"response_language" enum:"pt-PT,en,es" doc:"The language messages to this person are written in"`
}

// AccountPatchIn changes the calling person's settings; only the keys sent change.
type AccountPatchIn struct {
	Locale   json.RawMessage `json:"locale,omitempty" doc:"pt-PT, pt-BR, en-GB, en-US, es-ES, de-CH or fr-CH; null: the workspace default"`
	Timezone json.RawMessage `json:"timezone,omitempty" doc:"IANA time zone; null: the workspace's"`
}

// EgressIPsOut lists the addresses Vigia's outbound connections come from.
type EgressIPsOut struct {
	Addresses []string `json:"addresses" doc:"Addresses or CIDR ranges, from the installation's configuration (VIGIA_EGRESS_IPS); empty when the operator has not declared them"`
}

func (s *Server) workspaceRoutes() {
	s.register(operation{ID: "getWorkspaceLocale", Method: http.MethodGet, Path: "/api/v1/workspace/locale", Tag: "workspace",
		Summary: "The workspace's default locale and time zone", Response: WorkspaceLocaleOut{}}, s.handleWorkspaceLocaleGet)
	s.register(operation{ID: "putWorkspaceLocale", Method: http.MethodPut, Path: "/api/v1/workspace/locale", Tag: "workspace",
		Summary: "Set the workspace's default locale and time zone (admin session)", Body: WorkspaceLocaleIn{},
		Response: WorkspaceLocaleOut{}}, s.handleWorkspaceLocalePut)
	s.register(operation{ID: "getWorkspaceCurrency", Method: http.MethodGet, Path: "/api/v1/workspace/currency", Tag: "workspace",
		Summary: "The workspace's currency", Response: WorkspaceCurrencyOut{}}, s.handleWorkspaceCurrencyGet)
	s.register(operation{ID: "putWorkspaceCurrency", Method: http.MethodPut, Path: "/api/v1/workspace/currency", Tag: "workspace",
		Summary: "Set the workspace's currency (admin session); null goes back to EUR", Body: WorkspaceCurrencyIn{},
		Response: WorkspaceCurrencyOut{}}, s.handleWorkspaceCurrencyPut)
	s.register(operation{ID: "getMe", Method: http.MethodGet, Path: "/api/v1/auth/me", Tag: "workspace",
		Summary: "The calling person's account (a person's session)", Response: AccountOut{}}, s.handleMeGet)
	s.register(operation{ID: "patchMe", Method: http.MethodPatch, Path: "/api/v1/auth/me", Tag: "workspace",
		Summary: "Change the calling person's locale and time zone; only sent keys change, null is the workspace default",
		Body:    AccountPatchIn{}, Response: AccountOut{}}, s.handleMePatch)
	s.register(operation{ID: "getEgressIPs", Method: http.MethodGet, Path: "/api/v1/public/egress-ips", Tag: "workspace", Public: true,
		Summary: "The addresses Vigia's outbound connections come from (public)", Response: EgressIPsOut{}}, s.handleEgressIPs)
}

func toWorkspaceLocaleOut(w identity.Workspace) WorkspaceLocaleOut {
	return WorkspaceLocaleOut{Locale: w.Locale, EffectiveLocale: w.EffectiveLocale(), Timezone: w.Timezone}
}

func toWorkspaceCurrencyOut(w identity.Workspace) WorkspaceCurrencyOut {
	return WorkspaceCurrencyOut{Currency: w.EffectiveCurrency(), Default: w.Currency == nil}
}

func (s *Server) handleWorkspaceLocaleGet(w http.ResponseWriter, r *http.Request, _ *input) {
	ws, err := s.deps.Account.CurrentWorkspace(r.Context())
	s.reply(w, r, err, func() any { return toWorkspaceLocaleOut(ws) })
}

func (s *Server) handleWorkspaceLocalePut(w http.ResponseWriter, r *http.Request, in *input) {
	var body WorkspaceLocaleIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := required(present("timezone", body.Timezone != "")); err != nil {
		s.writeError(w, r, err)
		return
	}
	locale, _, err := nullableString(body.Locale, "locale")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ws, err := s.deps.Account.SetWorkspaceLocale(r.Context(), locale, strings.TrimSpace(body.Timezone))
	s.reply(w, r, err, func() any { return toWorkspaceLocaleOut(ws) })
}

func (s *Server) handleWorkspaceCurrencyGet(w http.ResponseWriter, r *http.Request, _ *input) {
	ws, err := s.deps.Account.CurrentWorkspace(r.Context())
	s.reply(w, r, err, func() any { return toWorkspaceCurrencyOut(ws) })
}

func (s *Server) handleWorkspaceCurrencyPut(w http.ResponseWriter, r *http.Request, in *input) {
	var body WorkspaceCurrencyIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := required(present("currency", len(body.Currency) > 0)); err != nil {
		s.writeError(w, r, err)
		return
	}
	currency, _, err := nullableString(body.Currency, "currency")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ws, err := s.deps.Account.SetWorkspaceCurrency(r.Context(), currency)
	s.reply(w, r, err, func() any { return toWorkspaceCurrencyOut(ws) })
}

func (s *Server) toAccountOut(r *http.Request, a identity.Account) AccountOut {
	return AccountOut{ID: a.User.ID, Email: a.User.Email, Role: string(a.User.Role), WorkspaceID: a.Workspace.ID,
		WorkspaceName: a.Workspace.Name, Plan: string(a.Workspace.Plan), Locale: a.User.Locale, Timezone: a.User.Timezone,
		EffectiveLocale: a.EffectiveLocale(), EffectiveTimezone: a.EffectiveTimezone(),
		WorkspaceLocale: a.Workspace.Locale, WorkspaceTimezone: a.Workspace.Timezone,
		ResponseLanguage: vigia.Lang(r.Context())}
}

func (s *Server) handleMeGet(w http.ResponseWriter, r *http.Request, _ *input) {
	a, err := s.deps.Account.Me(r.Context())
	s.reply(w, r, err, func() any { return s.toAccountOut(r, a) })
}

func (s *Server) handleMePatch(w http.ResponseWriter, r *http.Request, in *input) {
	var body AccountPatchIn
	if err := in.Decode(&body, 0); err != nil {
		s.writeError(w, r, err)
		return
	}
	var u identity.AccountUpdate
	var err error
	u.SetLocale = len(body.Locale) > 0
	if u.Locale, _, err = nullableString(body.Locale, "locale"); err != nil {
		s.writeError(w, r, err)
		return
	}
	u.SetTimezone = len(body.Timezone) > 0
	if u.Timezone, _, err = nullableString(body.Timezone, "timezone"); err != nil {
		s.writeError(w, r, err)
		return
	}
	a, err := s.deps.Account.UpdateMe(r.Context(), u)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// The answer already follows the new settings.
	r = r.WithContext(vigia.WithLang(r.Context(), s.langOf(r, a)))
	writeJSON(w, http.StatusOK, s.toAccountOut(r, a))
}

func (s *Server) handleEgressIPs(w http.ResponseWriter, r *http.Request, _ *input) {
	out := EgressIPsOut{Addresses: []string{}}
	for _, p := range s.cfg.EgressIPs {
		if p.IsSingleIP() {
			out.Addresses = append(out.Addresses, p.Addr().String())
		} else {
			out.Addresses = append(out.Addresses, p.String())
		}
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	writeJSON(w, http.StatusOK, out)
}

// ParseEgressIPs reads VIGIA_EGRESS_IPS: comma-separated addresses or CIDR ranges.
func ParseEgressIPs(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, err
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// langOf is the response language after an account change: the contract's order over
// the new settings.
func (s *Server) langOf(r *http.Request, a identity.Account) string {
	var account, workspace string
	if a.User.Locale != nil {
		account = *a.User.Locale
	}
	if a.Workspace.Locale != nil {
		workspace = *a.Workspace.Locale
	}
	return i18n.Resolve(account, workspace, r.Header.Get("Accept-Language"))
}
