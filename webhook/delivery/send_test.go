package delivery_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/vigia-data/vigia/netguard"
	"github.com/vigia-data/vigia/webhook/delivery"
)

// mapResolver answers from a fixed table; unknown names are NXDOMAIN.
type mapResolver map[string][]string

func (m mapResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	answers, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]net.IPAddr, 0, len(answers))
	for _, a := range answers {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	return out, nil
}

// resolver maps the names the test certificate of httptest covers to loopback.
var resolver = mapResolver{
	"receiver.example.com": {"127.0.0.1"},
	"other.example.com":    {"127.0.0.1"},
}

// recorder is a receiver that keeps what it was sent.
type recorder struct {
	mu       sync.Mutex
	requests []received
}

type received struct {
	header http.Header
	body   []byte
}

func (r *recorder) add(h http.Header, body []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, received{h.Clone(), body})
}

func (r *recorder) all() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.requests)
}

// receiver is a TLS test server reachable by name through the allowlist.
type receiver struct {
	url  string // https://<name>:<port>
	cert *x509.Certificate
	pool *x509.CertPool // trusts cert alone
	rec  *recorder
}

// MustStartReceiver starts a TLS server named name (a *.example.com name the
// test certificate covers); status decides each reply from the request number.
func MustStartReceiver(tb testing.TB, name string, status func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	tb.Helper()
	rec := &recorder{}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.add(r.Header, body)
		status(len(rec.all()), w, r)
	}))
	tb.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		tb.Fatalf("parse: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	return &receiver{url: "https://" + net.JoinHostPort(name, u.Port()), cert: ts.Certificate(), pool: pool, rec: rec}
}

func replyStatus(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// MustClient returns a guarded client that admits the allowlisted names.
func MustClient(tb testing.TB, pool *x509.CertPool, timeout time.Duration, allow ...string) *http.Client {
	tb.Helper()
	d := netguard.NewDialer(netguard.Policy{AllowHosts: allow}, resolver)
	return netguard.NewHTTPClient(d, timeout, pool)
}

const secret = "whsec_5f0c2a9e41b37d86c0e4a1f29b7d358e6a0c4f1b92d7e3a8c5b06f14e9a2d7c3"

// stableErrTexts are the only texts an Attempt may carry.
var stableErrTexts = []string{
	"", delivery.ErrTextRefused, delivery.ErrTextUnresolvable, delivery.ErrTextTimeout,
	delivery.ErrTextConnRefused, delivery.ErrTextDropped, delivery.ErrTextUnreachable,
	delivery.ErrTextTLSCert, delivery.ErrTextTLS, delivery.ErrTextRedirect, delivery.ErrTextCanceled,
	delivery.ErrTextInvalidURL, delivery.ErrTextRequestFailed,
}

func requireStableErr(tb testing.TB, a delivery.Attempt) {
	tb.Helper()
	if strings.HasPrefix(a.Err, "http ") {
		if _, err := strconv.Atoi(strings.TrimPrefix(a.Err, "http ")); err == nil {
			return
		}
	}
	if !slices.Contains(stableErrTexts, a.Err) {
		tb.Fatalf("Attempt.Err %q is not a stable text", a.Err)
	}
}

func newDelivery(url string) delivery.Delivery {
	return delivery.Delivery{
		URL: url, Secret: secret, Event: delivery.EventTest,
		ID: "0b9f3c3e-8a51-4c1e-9d4f-2f6f1c7d9a10", Body: []byte(`{"event":"service.test","title":"Olá"}`),
		LegacyPrefix: delivery.DefaultLegacyPrefix, LegacyUntil: delivery.DefaultLegacyUntil(),
	}
}

func TestSendDeliversAndReceiverVerifiesSignature(t *testing.T) {
	rcv := MustStartReceiver(t, "receiver.example.com", replyStatus(http.StatusNoContent))
	client := MustClient(t, rcv.pool, 0, "receiver.example.com")
	d := newDelivery(rcv.url + "/hooks/vigia")
	now := time.Now()
	a := d.Attempt(context.Background(), client, 1, now)
	if a.Outcome != delivery.OutcomeDelivered || a.StatusCode != http.StatusNoContent || a.Err != "" || a.N != 1 {
		t.Fatalf("attempt = %+v, want delivered 204", a)
	}
	got := rcv.rec.all()
	if len(got) != 1 {
		t.Fatalf("receiver got %d requests, want 1", len(got))
	}
	h, body := got[0].header, got[0].body
	if string(body) != string(d.Body) {
		t.Fatalf("body = %q, want %q", body, d.Body)
	}
	ts, err := strconv.ParseInt(h.Get(delivery.HeaderTimestamp), 10, 64)
	if err != nil {
		t.Fatalf("timestamp header: %v", err)
	}
	if err := delivery.Verify(secret, h.Get(delivery.HeaderSignature), ts, body, now, 0); err != nil {
		t.Fatalf("receiver cannot verify: %v", err)
	}
	checks := map[string]string{
		"Content-Type":           "application/json",
		delivery.HeaderEvent:     delivery.EventTest,
		delivery.HeaderDelivery:  d.ID,
		"X-Vigil-Signature":      h.Get(delivery.HeaderSignature),
		"X-Vigil-Delivery":       d.ID,
		delivery.HeaderTimestamp: strconv.FormatInt(now.Unix(), 10),
	}
	for name, want := range checks {
		if h.Get(name) != want {
			t.Errorf("%s = %q, want %q", name, h.Get(name), want)
		}
	}
}

func TestSendRetriesWithFreshSignatureUntilDelivered(t *testing.T) {
	rcv := MustStartReceiver(t, "receiver.example.com", func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < 3 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	client := MustClient(t, rcv.pool, 0, "receiver.example.com")
	d := newDelivery(rcv.url)
	// Attempts are stamped with a simulated clock: the schedule is tested
	// without sleeping.
	now := time.Unix(1795255200, 0)
	var outcomes []delivery.Outcome
	for n := 1; ; n++ {
		a := d.Attempt(context.Background(), client, n, now)
		outcomes = append(outcomes, a.Outcome)
		if a.Outcome != delivery.OutcomeRetry {
			break
		}
		wait, again := delivery.Backoff(n)
		if !again {
			break
		}
		now = now.Add(wait)
	}
	want := []delivery.Outcome{delivery.OutcomeRetry, delivery.OutcomeRetry, delivery.OutcomeDelivered}
	if !slices.Equal(outcomes, want) {
		t.Fatalf("outcomes = %v, want %v", outcomes, want)
	}
	reqs := rcv.rec.all()
	wantTS := []int64{1795255200, 1795255201, 1795255206}
	seenSig := map[string]bool{}
	for i, r := range reqs {
		ts, _ := strconv.ParseInt(r.header.Get(delivery.HeaderTimestamp), 10, 64)
		if ts != wantTS[i] {
			t.Errorf("attempt %d timestamp = %d, want %d", i+1, ts, wantTS[i])
		}
		if r.header.Get(delivery.HeaderDelivery) != d.ID {
			t.Errorf("attempt %d changed the delivery id", i+1)
		}
		sig := r.header.Get(delivery.HeaderSignature)
		if err := delivery.Verify(secret, sig, ts, r.body, time.Unix(ts, 0), 0); err != nil {
			t.Errorf("attempt %d: %v", i+1, err)
		}
		if seenSig[sig] {
			t.Errorf("attempt %d reused a signature", i+1)
		}
		seenSig[sig] = true
	}
}

func TestSendClassifiesReceiverReplies(t *testing.T) {
	tests := []struct {
		status  int
		outcome delivery.Outcome
		err     string
	}{
		{http.StatusOK, delivery.OutcomeDelivered, ""},
		{http.StatusAccepted, delivery.OutcomeDelivered, ""},
		{http.StatusInternalServerError, delivery.OutcomeRetry, "http 500"},
		{http.StatusBadGateway, delivery.OutcomeRetry, "http 502"},
		{http.StatusUnauthorized, delivery.OutcomeFailed, "http 401"},
		{http.StatusNotFound, delivery.OutcomeFailed, "http 404"},
		{http.StatusTooManyRequests, delivery.OutcomeFailed, "http 429"},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			rcv := MustStartReceiver(t, "receiver.example.com", func(_ int, w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				fmt.Fprint(w, "receiver secret detail that must not be kept")
			})
			client := MustClient(t, rcv.pool, 0, "receiver.example.com")
			a := newDelivery(rcv.url).Attempt(context.Background(), client, 1, time.Now())
			if a.Outcome != tt.outcome || a.Err != tt.err || a.StatusCode != tt.status {
				t.Fatalf("attempt = %+v, want %s %q", a, tt.outcome, tt.err)
			}
		})
	}
}

func TestSendDoesNotFollowRedirectToAnotherHost(t *testing.T) {
	other := MustStartReceiver(t, "other.example.com", replyStatus(http.StatusOK))
	rcv := MustStartReceiver(t, "receiver.example.com", func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.url+"/steal", http.StatusFound)
	})
	// Both names are admitted and both CAs trusted: only the redirect rule
	// stands between the first receiver and the second.
	client := MustClient(t, poolOf(t, rcv, other), 0, "receiver.example.com", "other.example.com")
	a := newDelivery(rcv.url).Attempt(context.Background(), client, 1, time.Now())
	if a.Outcome != delivery.OutcomeFailed || a.Err != delivery.ErrTextRedirect || a.StatusCode != http.StatusFound {
		t.Fatalf("attempt = %+v, want failed redirect", a)
	}
	if n := len(other.rec.all()); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
}

// poolOf trusts the test certificate of every receiver (httptest servers
// share one certificate, but the test should not rely on it).
func poolOf(tb testing.TB, rcvs ...*receiver) *x509.CertPool {
	tb.Helper()
	pool := x509.NewCertPool()
	for _, r := range rcvs {
		pool.AddCert(r.cert)
	}
	return pool
}

func TestSendTimesOutAndRetries(t *testing.T) {
	release := make(chan struct{})
	rcv := MustStartReceiver(t, "receiver.example.com", func(int, http.ResponseWriter, *http.Request) {
		// Hold the reply until the test ends: no reply can ever race the
		// client's timeout, so the only possible outcome is the timeout.
		<-release
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	client := MustClient(t, rcv.pool, 50*time.Millisecond, "receiver.example.com")
	a := newDelivery(rcv.url).Attempt(context.Background(), client, 1, time.Now())
	if a.Outcome != delivery.OutcomeRetry || a.Err != delivery.ErrTextTimeout || a.StatusCode != 0 {
		t.Fatalf("attempt = %+v, want retry timeout", a)
	}
}

func TestSendRefusesInternalDestinationWithoutConnecting(t *testing.T) {
	rcv := MustStartReceiver(t, "receiver.example.com", replyStatus(http.StatusOK))
	client := MustClient(t, rcv.pool, 0) // no allowlist: the webhook policy
	a := newDelivery(rcv.url).Attempt(context.Background(), client, 1, time.Now())
	if a.Outcome != delivery.OutcomeRefused || a.Err != delivery.ErrTextRefused {
		t.Fatalf("attempt = %+v, want refused", a)
	}
	if n := len(rcv.rec.all()); n != 0 {
		t.Fatalf("receiver got %d requests", n)
	}
}

func TestSendNetworkFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, closedPort, _ := net.SplitHostPort(ln.Addr().String())
	ln.Close()

	dropping := MustStartReceiver(t, "receiver.example.com", func(_ int, w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	tests := []struct {
		name    string
		url     string
		pool    *x509.CertPool
		outcome delivery.Outcome
		err     string
	}{
		{"ConnectionRefused", "https://receiver.example.com:" + closedPort, dropping.pool, delivery.OutcomeRetry, delivery.ErrTextConnRefused},
		{"ConnectionDropped", dropping.url, dropping.pool, delivery.OutcomeRetry, delivery.ErrTextDropped},
		{"UntrustedCertificate", dropping.url, x509.NewCertPool(), delivery.OutcomeFailed, delivery.ErrTextTLSCert},
		{"Unresolvable", "https://nowhere.example.com/", dropping.pool, delivery.OutcomeRefused, delivery.ErrTextUnresolvable},
		{"PlainHTTP", "http://receiver.example.com/", dropping.pool, delivery.OutcomeFailed, delivery.ErrTextInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := MustClient(t, tt.pool, 0, "receiver.example.com")
			a := newDelivery(tt.url).Attempt(context.Background(), client, 1, time.Now())
			if a.Outcome != tt.outcome || a.Err != tt.err {
				t.Fatalf("attempt = %+v, want %s %q", a, tt.outcome, tt.err)
			}
			requireStableErr(t, a)
		})
	}
}

func TestClassify(t *testing.T) {
	resp := func(code int) *http.Response { return &http.Response{StatusCode: code} }
	wrapped := func(err error) error {
		return &url.Error{Op: "Post", URL: "https://hooks.example.net/x", Err: err}
	}
	opErr := func(err error) error { return &net.OpError{Op: "dial", Net: "tcp", Err: err} }
	tests := []struct {
		name string
		resp *http.Response
		err  error
		want delivery.Outcome
	}{
		{"200", resp(200), nil, delivery.OutcomeDelivered},
		{"204", resp(204), nil, delivery.OutcomeDelivered},
		{"299", resp(299), nil, delivery.OutcomeDelivered},
		{"301", resp(301), nil, delivery.OutcomeFailed},
		{"302", resp(302), nil, delivery.OutcomeFailed},
		{"307", resp(307), nil, delivery.OutcomeFailed},
		{"400", resp(400), nil, delivery.OutcomeFailed},
		{"401", resp(401), nil, delivery.OutcomeFailed},
		{"429", resp(429), nil, delivery.OutcomeFailed},
		{"500", resp(500), nil, delivery.OutcomeRetry},
		{"503", resp(503), nil, delivery.OutcomeRetry},
		{"599", resp(599), nil, delivery.OutcomeRetry},
		{"Refused", nil, wrapped(&netguard.RefusedError{Reason: netguard.ReasonLoopback}), delivery.OutcomeRefused},
		{"Unresolvable", nil, wrapped(netguard.ErrUnresolvable), delivery.OutcomeRefused},
		{"Deadline", nil, wrapped(context.DeadlineExceeded), delivery.OutcomeRetry},
		{"ConnectionRefused", nil, wrapped(opErr(os.NewSyscallError("connect", syscall.ECONNREFUSED))), delivery.OutcomeRetry},
		{"Reset", nil, wrapped(opErr(os.NewSyscallError("read", syscall.ECONNRESET))), delivery.OutcomeRetry},
		{"EOF", nil, wrapped(io.EOF), delivery.OutcomeRetry},
		{"UnknownAuthority", nil, wrapped(x509.UnknownAuthorityError{}), delivery.OutcomeFailed},
		{"Other", nil, wrapped(errors.New("boom")), delivery.OutcomeRetry},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := delivery.Classify(tt.resp, tt.err); got != tt.want {
				t.Fatalf("Classify = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		n     int
		wait  time.Duration
		again bool
	}{
		{0, 0, false},
		{1, time.Second, true},
		{2, 5 * time.Second, true},
		{3, 25 * time.Second, true},
		{4, 0, false},
		{5, 0, false},
	}
	total := time.Duration(0)
	for _, tt := range tests {
		wait, again := delivery.Backoff(tt.n)
		if wait != tt.wait || again != tt.again {
			t.Errorf("Backoff(%d) = %v, %v; want %v, %v", tt.n, wait, again, tt.wait, tt.again)
		}
		total += wait
	}
	sends := 1
	for n := 1; ; n++ {
		if _, again := delivery.Backoff(n); !again {
			break
		}
		sends++
	}
	if sends != delivery.MaxAttempts || total != 31*time.Second {
		t.Fatalf("%d sends over %v of waiting; want %d sends, 31 s", sends, total, delivery.MaxAttempts)
	}
}
