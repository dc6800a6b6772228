package product

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"time"

	"github.com/vigia-data/vigia"
	"github.com/vigia-data/vigia/catalog"
	"github.com/vigia-data/vigia/trust"
)

// shareTokenPrefix starts every public share token.
const shareTokenPrefix = "dp_"

var shareTokenRE = regexp.MustCompile(`^dp_[0-9a-f]{40}$`)

// ShareInfo is a domain's public share as its managers see it.
type ShareInfo struct {
	DomainID  string
	Enabled   bool
	Token     *string
	PageURL   *string
	BadgeURL  *string
	CreatedAt *time.Time
	RotatedAt *time.Time
}

func newShareToken() (string, []byte) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; never fall back to a weak token.
		panic(err)
	}
	t := shareTokenPrefix + hex.EncodeToString(b[:])
	h := sha256.Sum256([]byte(t))
	return t, h[:]
}

func (s *Service) info(sh Share, ok bool) (ShareInfo, error) {
	out := ShareInfo{DomainID: sh.DomainID, Enabled: ok}
	if !ok {
		return out, nil
	}
	plain, err := s.sealer.Open(sh.TokenSealed, []byte(sh.DomainID))
	if err != nil {
		return ShareInfo{}, vigia.Internal(err)
	}
	t := string(plain)
	page := s.cfg.PublicBaseURL + "/api/v1/public/domains/" + t
	badge := s.cfg.PublicBaseURL + "/api/v1/public/badge/domains/" + t + ".svg"
	created := sh.CreatedAt
	out.Token, out.PageURL, out.BadgeURL, out.CreatedAt, out.RotatedAt = &t, &page, &badge, &created, sh.RotatedAt
	return out, nil
}

// PublicShare returns the domain's public share (enabled false when none). A manager's
// or admin's session. Returns KindNotFound and KindForbidden as UpdateDomain.
func (s *Service) PublicShare(ctx context.Context, id string) (ShareInfo, error) {
	d, _, err := s.managed(ctx, id)
	if err != nil {
		return ShareInfo{}, err
	}
	sh, ok, err := s.store.Share(ctx, d.ID)
	if err != nil {
		return ShareInfo{}, err
	}
	if !ok {
		sh.DomainID = d.ID
	}
	return s.info(sh, ok)
}

// EnableShare creates the domain's public share, or returns the live one (created
// false). A manager's or admin's session.
func (s *Service) EnableShare(ctx context.Context, id string) (ShareInfo, bool, error) {
	var out ShareInfo
	created := false
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.lockManaged(ctx, id)
		if err != nil {
			return err
		}
		sh, ok, err := s.store.Share(ctx, d.ID)
		if err != nil {
			return err
		}
		if !ok {
			sh, err = s.newShare(d, p, nil)
			if err != nil {
				return err
			}
			if err := s.store.SaveShare(ctx, sh); err != nil {
				return err
			}
			if err := s.log(ctx, p, "public_share.enabled", d.ID, nil); err != nil {
				return err
			}
			created = true
		}
		out, err = s.info(sh, true)
		return err
	})
	return out, created, err
}

func (s *Service) newShare(d Domain, p vigia.Principal, rotated *time.Time) (Share, error) {
	token, hash := newShareToken()
	sealed, err := s.sealer.Seal([]byte(token), []byte(d.ID))
	if err != nil {
		return Share{}, vigia.Internal(err)
	}
	return Share{DomainID: d.ID, WorkspaceID: d.WorkspaceID, TokenHash: hash, TokenSealed: sealed, CreatedBy: p.UserID,
		CreatedAt: s.clock.Now(), RotatedAt: rotated}, nil
}

// RotateShare replaces the share token at once: the old page and badge answer 404.
// Returns KindNotFound when the domain has no share.
func (s *Service) RotateShare(ctx context.Context, id string) (ShareInfo, error) {
	var out ShareInfo
	err := s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.lockManaged(ctx, id)
		if err != nil {
			return err
		}
		old, ok, err := s.store.Share(ctx, d.ID)
		if err != nil {
			return err
		}
		if !ok {
			return vigia.NotFound()
		}
		now := s.clock.Now()
		sh, err := s.newShare(d, p, &now)
		if err != nil {
			return err
		}
		sh.CreatedAt, sh.CreatedBy = old.CreatedAt, old.CreatedBy
		if err := s.store.SaveShare(ctx, sh); err != nil {
			return err
		}
		if err := s.log(ctx, p, "public_share.rotated", d.ID, nil); err != nil {
			return err
		}
		out, err = s.info(sh, true)
		return err
	})
	return out, err
}

// RevokeShare revokes the public share at once. Returns KindNotFound when there is none.
func (s *Service) RevokeShare(ctx context.Context, id string) error {
	return s.tx.InTx(ctx, func(ctx context.Context) error {
		d, p, err := s.managed(ctx, id)
		if err != nil {
			return err
		}
		ok, err := s.store.DeleteShare(ctx, d.ID)
		if err != nil {
			return err
		}
		if !ok {
			return vigia.NotFound()
		}
		return s.log(ctx, p, "public_share.revoked", d.ID, nil)
	})
}

// PublicDataset is a dataset on the public page: its name, verdict and score only.
type PublicDataset struct {
	Name    string
	Verdict string
	Score   *float64
}

// MonthAttainment is this month's SLO attainment on the public page.
type MonthAttainment struct {
	Month           string
	AvailabilityPct *float64
	MetDays         int
	ViolatedDays    int
	ObjectivePct    *float64
	ObjectiveMet    *bool
}

// PublicPage is the public page of a shared domain: only these fields, never emails,
// internal ids, columns or sample values.
type PublicPage struct {
	Name        string
	Description string
	OwnerName   *string
	Version     string
	Status      string
	Score       *float64
	SLA         SLA
	Month       MonthAttainment
	Readiness   map[string]string
	Datasets    []PublicDataset
	GeneratedAt time.Time
	// Verdict is the domain's verdict, for the badge (not a field of the page).
	Verdict string
}

// public resolves a share token to its domain and a context reading as the public: the
// teams granted on the domain, never an admin, so that datasets of other
// restricted-access domains stay out.
func (s *Service) public(ctx context.Context, token string) (context.Context, Domain, error) {
	if !shareTokenRE.MatchString(token) {
		return ctx, Domain{}, vigia.NotFound()
	}
	h := sha256.Sum256([]byte(token))
	sh, err := s.store.ShareByHash(ctx, h[:])
	if err != nil {
		return ctx, Domain{}, err
	}
	d, err := s.store.DomainByID(ctx, catalog.Viewer{WorkspaceID: sh.WorkspaceID, TeamIDs: []string{}, Admin: true}, sh.DomainID)
	if err != nil {
		return ctx, Domain{}, err
	}
	teams := make([]string, 0, len(d.Teams))
	for _, t := range d.Teams {
		teams = append(teams, t.TeamID)
	}
	p := vigia.Principal{WorkspaceID: sh.WorkspaceID, UserID: "public", Role: vigia.RoleViewer, ReadOnly: true, TeamIDs: teams}
	pctx := vigia.WithPrincipal(ctx, p)
	visible, err := s.store.DomainByID(pctx, catalog.ViewerOf(p), d.ID)
	switch {
	case err == nil:
		d.DatasetIDs = visible.DatasetIDs
	case vigia.IsKind(err, vigia.KindNotFound):
		d.DatasetIDs = []string{}
	default:
		return ctx, Domain{}, err
	}
	return pctx, d, nil
}

// PublicPage returns the public page of the domain shared under token. Returns
// KindNotFound for an unknown, malformed or revoked token.
func (s *Service) PublicPage(ctx context.Context, token string) (PublicPage, error) {
	pctx, d, err := s.public(ctx, token)
	if err != nil {
		return PublicPage{}, err
	}
	fs, as, err := s.memberFacts(pctx, d)
	if err != nil {
		return PublicPage{}, err
	}
	now := s.clock.Now()
	slo, err := s.slo(pctx, d, now, fs)
	if err != nil {
		return PublicPage{}, err
	}
	r, err := s.readiness(pctx, d, fs, as)
	if err != nil {
		return PublicPage{}, err
	}
	v := verdictOf(d, fs)
	out := PublicPage{Name: scrub(d.Name), Description: scrub(d.Description), Version: d.Version.String(), Status: d.Status,
		Score: v.Score, SLA: d.SLA.Clone(), Readiness: map[string]string{}, Datasets: make([]PublicDataset, 0, len(fs)),
		GeneratedAt: now, Verdict: v.Verdict,
		Month: MonthAttainment{Month: slo.Month, AvailabilityPct: slo.AvailabilityPct, MetDays: slo.MetDays,
			ViolatedDays: slo.ViolatedDays, ObjectivePct: slo.ObjectivePct, ObjectiveMet: slo.ObjectiveMet}}
	if d.OwnerName != nil {
		o := scrub(*d.OwnerName)
		out.OwnerName = &o
	}
	for _, u := range r.UseCases {
		out.Readiness[u.UseCase] = u.Status
	}
	for _, dv := range v.Datasets {
		out.Datasets = append(out.Datasets, PublicDataset{Name: scrub(dv.DatasetName), Verdict: dv.Verdict, Score: dv.Score})
	}
	return out, nil
}

// PublicBadge returns the SVG badge of the domain shared under token: its verdict and
// score. Returns KindNotFound for an unknown, malformed or revoked token.
func (s *Service) PublicBadge(ctx context.Context, token string) ([]byte, error) {
	pctx, d, err := s.public(ctx, token)
	if err != nil {
		return nil, err
	}
	as, err := s.trust.Assess(pctx, d.DatasetIDs)
	if err != nil {
		return nil, err
	}
	fs := make([]trust.Facts, 0, len(as))
	for _, a := range as {
		fs = append(fs, a.Facts)
	}
	v := verdictOf(d, fs)
	return Badge(v.Verdict, v.Score), nil
}
