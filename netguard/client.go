package netguard

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"
)

// NewHTTPClient returns a client whose every connection goes through d: proxy
// variables are ignored (a proxy would dial on our behalf, unchecked),
// redirects are returned instead of followed (a 3xx could point anywhere),
// TLS is 1.2 or later, and each request is bounded by timeout (10 s when
// timeout is not positive). A nil rootCAs uses the system pool, which honours
// SSL_CERT_FILE; a nil d refuses everything but public addresses.
func NewHTTPClient(d *Dialer, timeout time.Duration, rootCAs *x509.CertPool) *http.Client {
	if d == nil {
		d = NewDialer(Policy{}, nil)
	}
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	transport := &http.Transport{
		Proxy:       nil,
		DialContext: d.DialContext,
		TLSClientConfig: &tls.Config{
			MinVersion: tls.VersionTLS12,
			RootCAs:    rootCAs,
		},
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		ExpectContinueTimeout:  time.Second,
		MaxIdleConns:           64,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
