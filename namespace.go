package vigia

import (
	"net"
	"net/url"
	"strings"
)

// namespaceDefaultPorts are database servers' default ports by OpenLineage namespace
// scheme.
var namespaceDefaultPorts = map[string]string{"postgres": "5432", "mysql": "3306"}

// CanonicalNamespace reads an OpenLineage dataset namespace of a database server as the
// naming spec writes it, scheme://host:port, and returns it in one spelling: the scheme
// as the spec names it (postgresql → postgres, mariadb → mysql), the host lower-cased,
// the server's default port filled in. A sqlite: namespace (sqlite:file:///path) is kept
// as it is. ok is false for anything else: another scheme, a user or password, a path, a
// query.
func CanonicalNamespace(ns string) (string, bool) {
	ns = strings.TrimSpace(ns)
	if strings.HasPrefix(ns, "sqlite:") {
		return ns, len(ns) > len("sqlite:")
	}
	u, err := url.Parse(ns)
	if err != nil || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Hostname() == "" {
		return "", false
	}
	scheme := strings.ToLower(u.Scheme)
	switch scheme {
	case "postgresql":
		scheme = "postgres"
	case "mariadb":
		scheme = "mysql"
	}
	def, known := namespaceDefaultPorts[scheme]
	if !known {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = def
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}
