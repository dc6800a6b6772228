package client

import (
	"context"
	"net/http"
)

// BearerToken returns a request editor that sends token (an API token svc_… or a
// session token) as Authorization: Bearer on every request.
func BearerToken(token string) RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}
