package netguard_test

import (
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/vigia-data/vigia/netguard"
)

// newReceiver starts a TLS server reachable as receiver.example.com (a name
// its test certificate covers) through an allowlist and an injected resolver.
func newReceiver(tb testing.TB, h http.Handler) (*http.Client, string) {
	tb.Helper()
	ts := httptest.NewTLSServer(h)
	tb.Cleanup(ts.Close)
	u, err := url.Parse(ts.URL)
	if err != nil {
		tb.Fatalf("parse: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ts.Certificate())
	const host = "receiver.example.com"
	d := netguard.NewDialer(netguard.Policy{AllowHosts: []string{host}}, mapResolver{host: {"127.0.0.1"}})
	return netguard.NewHTTPClient(d, 0, pool), "https://" + net.JoinHostPort(host, u.Port())
}

func TestHTTPClientReachesAllowlistedTLSReceiver(t *testing.T) {
	var tlsVersion uint16
	client, base := newReceiver(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tlsVersion = r.TLS.Version
		io.WriteString(w, "ok")
	}))
	resp, err := client.Get(base + "/hook")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d", resp.StatusCode)
	}
	if tlsVersion < tls.VersionTLS12 {
		t.Fatalf("TLS version %x below 1.2", tlsVersion)
	}
}

func TestHTTPClientDoesNotFollowRedirects(t *testing.T) {
	var followed bool
	mux := http.NewServeMux()
	mux.HandleFunc("/hook", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/elsewhere", func(http.ResponseWriter, *http.Request) { followed = true })
	client, base := newReceiver(t, mux)
	resp, err := client.Get(base + "/hook")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || followed {
		t.Fatalf("status = %d, followed = %v; want the 302 itself", resp.StatusCode, followed)
	}
}

func TestHTTPClientIgnoresProxyVariables(t *testing.T) {
	proxy := MustListen(t)
	t.Setenv("HTTPS_PROXY", "http://"+proxy.Addr().String())
	t.Setenv("HTTP_PROXY", "http://"+proxy.Addr().String())
	t.Setenv("NO_PROXY", "")
	client, base := newReceiver(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	// net/http reads the proxy variables once per process, so the request
	// below proves nothing if an earlier test read them first: check the
	// transport itself too.
	if tr, ok := client.Transport.(*http.Transport); !ok || tr.Proxy != nil {
		t.Fatalf("transport consults a proxy function")
	}
	resp, err := client.Get(base + "/hook")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	resp.Body.Close()
	requireAcceptedNothing(t, proxy)
}
