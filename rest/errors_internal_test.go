package rest

import (
	"net/http"
	"testing"

	"github.com/vigia-data/vigia"
)

// The kinds whose causes every transport logs are exactly those REST answers with a 5xx.
func TestFaultKindsAreThe5xxAnswers(t *testing.T) {
	for k := vigia.KindInternal; k <= vigia.KindMethodNotAllowed; k++ {
		status, ok := statusByKind[k]
		if !ok {
			t.Fatalf("kind %d has no status", k)
		}
		if k.Fault() != (status >= http.StatusInternalServerError) {
			t.Errorf("kind %d: status %d, Fault %v", k, status, k.Fault())
		}
	}
}
