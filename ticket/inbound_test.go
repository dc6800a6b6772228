package ticket_test

import (
	"testing"

	"github.com/vigia-data/vigia/ticket"
)

func TestSignTicketEventIsHexHMACOfBody(t *testing.T) {
	// HMAC-SHA256("secret", "body"), computed independently with openssl.
	const want = "dc46983557fea127b43af721467eb9b3fde2338fe3e14f51952aa8478c13d355"
	if got := ticket.SignTicketEvent("secret", []byte("body")); got != want {
		t.Fatalf("SignTicketEvent = %s, want %s", got, want)
	}
}
