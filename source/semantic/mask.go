package semantic

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMaskRunes is the length after which a mask is cut and ends in "…": long free text
// would otherwise give one mask per value and say nothing.
const MaxMaskRunes = 40

// MaxMasks is how many of the most frequent masks a column reports.
const MaxMasks = 10

// Mask reduces a value to its shape: every digit becomes 9, every letter (of any script)
// becomes A, and every other character is kept. The mask is cut at MaxMaskRunes runes.
func Mask(value string) string {
	return string(AppendMask(nil, value))
}

// AppendMask appends the mask of value to dst and returns the extended buffer; it lets a
// caller reuse one buffer over a whole sample.
func AppendMask(dst []byte, value string) []byte {
	n := 0
	for _, r := range value {
		if n == MaxMaskRunes {
			return append(dst, "…"...)
		}
		n++
		switch {
		case unicode.IsDigit(r):
			dst = append(dst, '9')
		case unicode.IsLetter(r):
			dst = append(dst, 'A')
		case r == utf8.RuneError:
			dst = append(dst, '?')
		default:
			dst = utf8.AppendRune(dst, r)
		}
	}
	return dst
}

// MaskCount is how many sampled values have one mask.
type MaskCount struct {
	Mask  string
	Count int
}

// MaskCounter counts the masks of a stream of values.
type MaskCounter struct {
	counts map[string]*int
	buf    []byte
}

// Add counts the mask of one value. The value itself is not kept.
func (m *MaskCounter) Add(value string) {
	m.buf = AppendMask(m.buf[:0], value)
	if c, ok := m.counts[string(m.buf)]; ok { // a lookup by string(buf) does not allocate
		*c++
		return
	}
	if m.counts == nil {
		m.counts = make(map[string]*int)
	}
	one := 1
	m.counts[string(m.buf)] = &one
}

// AddBytes is Add for a value held in a byte slice.
func (m *MaskCounter) AddBytes(value []byte) {
	m.Add(unsafeString(value))
}

// Top returns the most frequent masks, at most limit, by count descending and then by
// mask, so that the order is stable between scans.
func (m *MaskCounter) Top(limit int) []MaskCount {
	out := make([]MaskCount, 0, len(m.counts))
	for k, v := range m.counts {
		out = append(out, MaskCount{Mask: k, Count: *v})
	}
	slices.SortFunc(out, func(a, b MaskCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return strings.Compare(a.Mask, b.Mask)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
