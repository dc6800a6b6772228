package identity

import (
	"context"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// TokenCacheTTL is how long an authenticated API token is kept in the process before
// its credential is read again. Revocation does not wait for it: every change that can
// end or alter a token's credential is announced by the database (CredentialWatcher)
// and evicts it at once, and while no watcher listens nothing is cached.
const TokenCacheTTL = 30 * time.Second

// tokenCacheMax bounds the cache; past it the cache starts over.
const tokenCacheMax = 10000

// CredentialWatcher announces the changes that end or alter cached credentials, in
// every process (Postgres LISTEN/NOTIFY): keys "token:<hex SHA-256>" and
// "workspace:<id>". WatchCredentials calls ready once it listens, then changed for each
// key, until ctx ends or the connection fails (its error).
type CredentialWatcher interface {
	WatchCredentials(ctx context.Context, ready func(), changed func(key string)) error
}

// tokenCache keeps authenticated API tokens by the hash of their secret.
type tokenCache struct {
	mu      sync.Mutex
	on      bool   // a watcher listens
	epoch   uint64 // advances with every eviction
	entries map[string]tokenEntry
}

type tokenEntry struct {
	c     Credential
	until time.Time
}

func (tc *tokenCache) get(hash []byte, now time.Time) (Credential, bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	e, ok := tc.entries[string(hash)]
	if !ok || !tc.on {
		return Credential{}, false
	}
	if !now.Before(e.until) {
		delete(tc.entries, string(hash))
		return Credential{}, false
	}
	return e.c, true
}

// start returns the epoch to give put after reading the credential.
func (tc *tokenCache) start() uint64 {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return tc.epoch
}

// put keeps a token's credential read after start returned epoch, unless something was
// evicted meanwhile (the read may predate a revocation) or no watcher listens.
func (tc *tokenCache) put(hash []byte, c Credential, epoch uint64, now time.Time) {
	until := now.Add(TokenCacheTTL)
	if c.ExpiresAt != nil && c.ExpiresAt.Before(until) {
		until = *c.ExpiresAt
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if !tc.on || tc.epoch != epoch || !now.Before(until) {
		return
	}
	if tc.entries == nil || len(tc.entries) >= tokenCacheMax {
		tc.entries = map[string]tokenEntry{}
	}
	tc.entries[string(hash)] = tokenEntry{c: c, until: until}
}

// touched records a written last use in the cached credential.
func (tc *tokenCache) touched(hash []byte, at time.Time) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if e, ok := tc.entries[string(hash)]; ok {
		e.c.LastUsedAt = &at
		tc.entries[string(hash)] = e
	}
}

// evict drops what key names: one token or a workspace's tokens.
func (tc *tokenCache) evict(key string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.epoch++
	switch {
	case strings.HasPrefix(key, "token:"):
		if h, err := hex.DecodeString(strings.TrimPrefix(key, "token:")); err == nil {
			delete(tc.entries, string(h))
			return
		}
	case strings.HasPrefix(key, "workspace:"):
		ws := strings.TrimPrefix(key, "workspace:")
		for k, e := range tc.entries {
			if e.c.WorkspaceID == ws {
				delete(tc.entries, k)
			}
		}
		return
	}
	tc.entries = nil // an unknown key: start over
}

// switchTo turns caching on (a watcher listens) or off, starting empty either way.
func (tc *tokenCache) switchTo(on bool) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.on, tc.entries = on, nil
	tc.epoch++
}

// RunTokenCache caches authenticated API tokens while w listens for the changes that
// evict them, until ctx ends; when the watcher fails the cache is emptied and off until
// it listens again (retried every second).
func (s *Service) RunTokenCache(ctx context.Context, w CredentialWatcher) {
	for ctx.Err() == nil {
		_ = w.WatchCredentials(ctx, func() { s.tokens.switchTo(true) }, s.tokens.evict)
		s.tokens.switchTo(false)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}
