package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host; *net.Resolver satisfies it and
// tests inject their own answers.
type Resolver interface {
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// defaultDialTimeout bounds a dial whose context carries no deadline, so a
// black-holed address cannot hold a worker forever.
const defaultDialTimeout = 30 * time.Second

// Dialer opens TCP connections only to destinations its Policy admits. It is
// safe for concurrent use.
type Dialer struct {
	policy   Policy
	resolver Resolver
}

// NewDialer returns a Dialer enforcing p; a nil r uses net.DefaultResolver.
func NewDialer(p Policy, r Resolver) *Dialer {
	if r == nil {
		r = net.DefaultResolver
	}
	p.AllowHosts = slices.Clone(p.AllowHosts)
	return &Dialer{policy: p, resolver: r}
}

// Policy returns the policy the dialer enforces.
func (d *Dialer) Policy() Policy {
	p := d.policy
	p.AllowHosts = slices.Clone(p.AllowHosts)
	return p
}

// Resolve resolves host once (a literal in any inet_aton spelling is parsed,
// not looked up) and checks every address. It returns an error matching
// ErrRefused if any address is refused, ErrUnresolvable if the name has no
// address, or a *DialError when the lookup itself failed.
func (d *Dialer) Resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	return resolveChecked(ctx, d.policy, d.resolver, host)
}

// DialContext connects to addr ("host:port") over tcp, tcp4 or tcp6. It
// resolves the host once, refuses the dial if any resolved address is
// refused, and connects to the checked addresses themselves, never to the
// name again; the kernel's destination is checked once more in
// net.Dialer.Control. Errors match ErrRefused, ErrUnresolvable, or are a
// *DialError; none carries the host or the address.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, refused(ReasonNetwork)
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refused(ReasonInvalidAddress)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return nil, refused(ReasonInvalidAddress)
	}
	ips, err := d.Resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	ips = slices.DeleteFunc(ips, func(ip netip.Addr) bool {
		return (network == "tcp4" && !ip.Is4()) || (network == "tcp6" && !ip.Is6())
	})
	if len(ips) == 0 {
		return nil, ErrUnresolvable
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultDialTimeout)
		defer cancel()
	}
	nd := net.Dialer{Control: d.control(host)}
	var first error
	for i, ip := range ips {
		if ctx.Err() != nil {
			break
		}
		actx, cancel := context.WithDeadline(ctx, partialDeadline(ctx, len(ips)-i))
		conn, err := nd.DialContext(actx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		cancel()
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = ctx.Err()
	}
	return nil, sanitizeDialError(first)
}

// control re-checks the address the kernel is about to connect to.
func (d *Dialer) control(host string) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return refused(ReasonInvalidAddress)
		}
		return d.policy.CheckAddr(host, ap.Addr())
	}
}

// partialDeadline shares the remaining time among the addresses left to try,
// as net.Dialer does, so one dead address does not eat the whole budget.
func partialDeadline(ctx context.Context, left int) time.Time {
	deadline, _ := ctx.Deadline()
	remaining := time.Until(deadline)
	share := remaining / time.Duration(left)
	const saneMinimum = 2 * time.Second
	if share < saneMinimum {
		share = min(remaining, saneMinimum)
	}
	return time.Now().Add(share)
}

func resolveChecked(ctx context.Context, p Policy, r Resolver, host string) ([]netip.Addr, error) {
	if host == "" {
		return nil, refused(ReasonInvalidAddress)
	}
	if ip, numeric, ok := parseHostAddr(host); numeric {
		if !ok {
			return nil, refused(ReasonInvalidAddress)
		}
		if err := p.CheckAddr(host, ip); err != nil {
			return nil, err
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	answers, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, sanitizeLookupError(err)
	}
	ips := make([]netip.Addr, 0, len(answers))
	for _, a := range answers {
		ip, ok := netip.AddrFromSlice(a.IP)
		if !ok {
			return nil, refused(ReasonInvalidAddress)
		}
		ip = ip.WithZone(a.Zone)
		// Every answer is checked, so a name mixing a public and an internal
		// address cannot be used to reach the internal one.
		if err := p.CheckAddr(host, ip); err != nil {
			return nil, err
		}
		ip = ip.Unmap()
		if !slices.Contains(ips, ip) {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, ErrUnresolvable
	}
	return ips, nil
}

// DialError is a failed lookup or connection. Its text names the failure
// only; the cause (which may hold the address) is kept for errors.Is/As and
// must not be logged as text.
type DialError struct {
	Reason string // "connection refused", "timeout", "unreachable", "canceled", "lookup failed", "connect failed"
	err    error
}

// Error names the failure without the host or address.
func (e *DialError) Error() string { return "netguard: " + e.Reason }

// Unwrap returns the underlying network error.
func (e *DialError) Unwrap() error { return e.err }

// Timeout reports whether the failure was a timeout (net.Error).
func (e *DialError) Timeout() bool { return e.Reason == "timeout" }

// Temporary is always false (net.Error; deprecated upstream).
func (e *DialError) Temporary() bool { return false }

func sanitizeLookupError(err error) error {
	var dnsErr *net.DNSError
	switch {
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return ErrUnresolvable
	case isTimeout(err):
		return &DialError{Reason: "timeout", err: err}
	case errors.Is(err, context.Canceled):
		return &DialError{Reason: "canceled", err: err}
	}
	return &DialError{Reason: "lookup failed", err: err}
}

func sanitizeDialError(err error) error {
	var re *RefusedError
	switch {
	case errors.As(err, &re):
		return re
	case isTimeout(err):
		return &DialError{Reason: "timeout", err: err}
	case errors.Is(err, context.Canceled):
		return &DialError{Reason: "canceled", err: err}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &DialError{Reason: "connection refused", err: err}
	case errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTUNREACH):
		return &DialError{Reason: "unreachable", err: err}
	}
	return &DialError{Reason: "connect failed", err: err}
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
