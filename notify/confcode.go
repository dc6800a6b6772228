package notify

import (
	"context"
	"crypto/subtle"

	"github.com/vigia-data/vigia"
)

// SameWebhookURL reports whether the channel's sealed URL is url, so that configuration
// as code can tell an unchanged URL without showing either (the URL is a secret).
// Admin sessions only; KindNotFound for an unknown channel or another workspace's.
func (s *Service) SameWebhookURL(ctx context.Context, id, url string) (bool, error) {
	p, err := vigia.RequireSession(ctx, vigia.RoleAdmin)
	if err != nil {
		return false, err
	}
	c, err := s.channel(ctx, p.WorkspaceID, id)
	if err != nil {
		return false, err
	}
	cur, err := s.box.Open(c.SealedURL, urlAAD(c.ID))
	if err != nil {
		return false, vigia.Internal(err)
	}
	return subtle.ConstantTimeCompare(cur, []byte(url)) == 1, nil
}
