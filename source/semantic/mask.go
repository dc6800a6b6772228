package semantic

import (
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
	for i := 0; i < len(value); {
		if n == MaxMaskRunes {
			return append(dst, "…"...)
		}
		n++
		if c := value[i]; c < utf8.RuneSelf {
			dst = append(dst, asciiMask[c])
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(value[i:])
		i += w
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

// asciiMask is the mask of each ASCII byte: the common case, without decoding runes.
var asciiMask = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		switch {
		case c >= '0' && c <= '9':
			t[c] = '9'
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			t[c] = 'A'
		default:
			t[c] = byte(c)
		}
	}
	return t
}()

// MaskCount is how many sampled values have one mask.
type MaskCount struct {
	Mask  string
	Count int
}

// MaskCounter counts the masks of a stream of values. It allocates per chunk of new
// masks, not per value: masks are copied into a growing arena that the map keys point into
// (the bytes of a key never change once written).
type MaskCounter struct {
	index  map[string]int32 // mask → position in counts
	counts []int32
	masks  []string
	arena  []byte // the current chunk; full chunks stay alive through the keys in index
	buf    []byte
}

// maskArenaChunk is the size of one arena chunk.
const maskArenaChunk = 16 << 10

// Add counts the mask of one value. The value itself is not kept.
func (m *MaskCounter) Add(value string) {
	m.buf = AppendMask(m.buf[:0], value)
	if i, ok := m.index[string(m.buf)]; ok { // a lookup by string(buf) does not allocate
		m.counts[i]++
		return
	}
	if m.index == nil {
		m.index = make(map[string]int32, 64)
	}
	if cap(m.arena)-len(m.arena) < len(m.buf) {
		m.arena = make([]byte, 0, max(maskArenaChunk, len(m.buf)))
	}
	start := len(m.arena)
	m.arena = append(m.arena, m.buf...)
	key := unsafeString(m.arena[start:len(m.arena):len(m.arena)])
	m.index[key] = int32(len(m.counts))
	m.counts = append(m.counts, 1)
	m.masks = append(m.masks, key)
}

// AddBytes is Add for a value held in a byte slice.
func (m *MaskCounter) AddBytes(value []byte) {
	m.Add(unsafeString(value))
}

// Top returns the most frequent masks, at most limit, by count descending and then by
// mask, so that the order is stable between scans.
func (m *MaskCounter) Top(limit int) []MaskCount {
	before := func(a, b int32) bool { // a ranks before b
		if m.counts[a] != m.counts[b] {
			return m.counts[a] > m.counts[b]
		}
		return m.masks[a] < m.masks[b]
	}
	// A running top list: most masks fall behind its last entry at one comparison.
	best := make([]int32, 0, max(limit, 0)+1)
	for i := range int32(len(m.counts)) {
		if limit <= 0 || (len(best) == limit && !before(i, best[len(best)-1])) {
			continue
		}
		at := len(best)
		for at > 0 && before(i, best[at-1]) {
			at--
		}
		best = slices.Insert(best, at, i)
		if len(best) > limit {
			best = best[:limit]
		}
	}
	out := make([]MaskCount, len(best))
	for k, i := range best {
		out[k] = MaskCount{Mask: strings.Clone(m.masks[i]), Count: int(m.counts[i])}
	}
	return out
}
