package netguard

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strconv"
)

// Stable codes of URL validation; transports put them in 422 items.
const (
	CodeURLInvalid         = "url_invalid"
	CodeURLScheme          = "url_scheme"
	CodeURLUserinfo        = "url_userinfo"
	CodeDestinationRefused = "destination_refused"
	CodeUnresolvable       = "unresolvable"
)

// maxURLLength bounds what is parsed and stored; receivers' URLs are short.
const maxURLLength = 2048

// URLError is a refused webhook URL. Its text is the stable code alone: it
// never holds the URL, the host or an address (the URL is a secret).
type URLError struct {
	Code string // one of the Code* constants
}

// Error returns the stable code.
func (e *URLError) Error() string { return e.Code }

// Is matches ErrRefused for destination_refused, ErrUnresolvable for
// unresolvable, and any *URLError with the same code.
func (e *URLError) Is(target error) bool {
	switch target {
	case ErrRefused:
		return e.Code == CodeDestinationRefused
	case ErrUnresolvable:
		return e.Code == CodeUnresolvable
	}
	var t *URLError
	return errors.As(target, &t) && t.Code == e.Code
}

// URLErrorCode returns the stable code of an error from ValidateURL, or ""
// if err is nil or not a validation error.
func URLErrorCode(err error) string {
	var ue *URLError
	if errors.As(err, &ue) {
		return ue.Code
	}
	return ""
}

// ValidateURL checks a webhook URL before it is saved (and may be called
// again before each send): https only, no userinfo, a host that resolves,
// and every resolved address admitted by p. Numeric hosts in any spelling the
// OS accepts (127.1, 2130706433, 0x7f000001, 0177.0.0.1, [::ffff:127.0.0.1])
// are parsed and judged as the address they stand for. It returns a
// *URLError with code url_invalid, url_scheme, url_userinfo,
// destination_refused or unresolvable.
func ValidateURL(ctx context.Context, raw string, p Policy, r Resolver) error {
	if raw == "" || len(raw) > maxURLLength {
		return &URLError{Code: CodeURLInvalid}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" {
		return &URLError{Code: CodeURLInvalid}
	}
	if u.Scheme != "https" {
		return &URLError{Code: CodeURLScheme}
	}
	if u.User != nil {
		return &URLError{Code: CodeURLUserinfo}
	}
	host := u.Hostname()
	if host == "" {
		return &URLError{Code: CodeURLInvalid}
	}
	if ps := u.Port(); ps != "" {
		if port, err := strconv.ParseUint(ps, 10, 16); err != nil || port == 0 {
			return &URLError{Code: CodeURLInvalid}
		}
	}
	if r == nil {
		r = net.DefaultResolver
	}
	if _, err := resolveChecked(ctx, p, r, host); err != nil {
		var re *RefusedError
		switch {
		case errors.As(err, &re) && re.Reason == ReasonInvalidAddress:
			return &URLError{Code: CodeURLInvalid}
		case errors.Is(err, ErrRefused):
			return &URLError{Code: CodeDestinationRefused}
		default:
			return &URLError{Code: CodeUnresolvable}
		}
	}
	return nil
}
