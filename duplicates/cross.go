package duplicates

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"slices"
	"strings"
)

// Across connections, records never meet as values: each source's rows are normalized
// (in the source, then here) and at once reduced to keyed hashes — HMAC-SHA-256 under a
// key drawn for the run and forgotten with it, truncated to 64 bits — of the blocking
// keys, of each field's whole value, and of each field's character bigrams. The values
// are dropped table by table, before the next source is read; the comparison and the
// clusters see hashes and row keys only, and the stored clusters name datasets and row
// keys only.
//
// Field similarity over hashes: 1 when the whole values' hashes are equal, else the Dice
// coefficient of the two bigram multisets (2·common / (|a|+|b|)); a name's bigrams are
// taken word by word, so the words' order does not count. A typo changes two or three
// bigrams of a field: a NIF with one wrong digit keeps 0.8, one with two neighbours
// swapped 0.7. The weights are Compare's; exact pairs (every common field's hash equal,
// two fields at least) have confidence 1, others the weighted mean, at most 0.999.

// Thresholds of the comparison over hashes (calibrated on the reference set, see
// MeasureAcross): a pair below CrossMatchThreshold is not a duplicate; a pair whose NIF
// bigrams share less than crossNIFVeto are different entities.
const (
	CrossMatchThreshold = 0.8
	crossNIFVeto        = 0.7
)

// Bounds of the cross-connection run.
const (
	// MaxCrossRecords bounds the records of one workspace's cross-connection run (all
	// its connections' tables together, each table at most MaxRowsPerDataset rows): about
	// 1 KB of hashes each, so at most some 200 MB for one run.
	MaxCrossRecords = 200_000
)

// Encoded is a record reduced to keyed hashes: its connection and dataset (indexes into
// the run's), row key, and per field (fieldOrder) the whole value's hash (0: absent) and
// the sorted hashes of its bigrams; Blocks are the hashed blocking keys.
type Encoded struct {
	Conn    int
	Dataset int
	Key     string
	Whole   [4]uint64
	Grams   [4][]uint64
	Blocks  []uint64
}

// Encoder hashes records under a key of its own.
type Encoder struct {
	mac hash.Hash
	buf []byte
}

// NewEncoder returns an encoder with a fresh random key.
func NewEncoder() *Encoder {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return &Encoder{mac: hmac.New(sha256.New, key)}
}

func (e *Encoder) sum(tag byte, s string) uint64 {
	e.mac.Reset()
	e.buf = append(e.buf[:0], tag)
	e.buf = append(e.buf, s...)
	e.mac.Write(e.buf)
	var out [sha256.Size]byte
	v := binary.BigEndian.Uint64(e.mac.Sum(out[:0]))
	if v == 0 {
		v = 1 // 0 means absent
	}
	return v
}

// Encode reduces a normalized record to hashes; conn is its connection's index.
func (e *Encoder) Encode(conn int, r Record) Encoded {
	out := Encoded{Conn: conn, Dataset: r.Dataset, Key: r.Key}
	for i, f := range fieldOrder {
		v := field(r, f)
		if v == "" {
			continue
		}
		tag := byte('0' + i)
		out.Whole[i] = e.sum(tag, v)
		var words []string
		if f == FieldName {
			words = strings.Fields(v)
		} else {
			words = []string{v}
		}
		for _, w := range words {
			rs := []rune("^" + w + "$")
			for j := 0; j+1 < len(rs); j++ {
				out.Grams[i] = append(out.Grams[i], e.sum(tag+16, string(rs[j:j+2])))
			}
		}
		slices.Sort(out.Grams[i])
	}
	for _, k := range blockKeys(r) {
		out.Blocks = append(out.Blocks, e.sum('b', k))
	}
	return out
}

// dice is the Dice coefficient of two sorted multisets.
func dice(a, b []uint64) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	common, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// CompareEncoded scores two encoded records as Compare does their values: over the fields
// both hold (two at least), 1 when every whole hash is equal, else the weighted mean of
// the fields' similarities (whole hash equal: 1, else bigram Dice). ok is false when they
// cannot be compared or their NIFs differ by more than a typo.
func CompareEncoded(a, b Encoded) (score float64, fields []string, ok bool) {
	var sum, wsum float64
	exact := true
	for i, f := range fieldOrder {
		if a.Whole[i] == 0 || b.Whole[i] == 0 {
			continue
		}
		s := 1.0
		if a.Whole[i] != b.Whole[i] {
			exact = false
			s = dice(a.Grams[i], b.Grams[i])
		}
		if f == FieldNIF && s < crossNIFVeto {
			return 0, nil, false
		}
		fields = append(fields, f)
		sum += weights[f] * s
		wsum += weights[f]
	}
	return scored(fields, exact, sum, wsum)
}

// MatchAcross clusters encoded records of several connections: candidate pairs are records
// of different connections sharing a hashed blocking key (blocks of more than MaxBlock
// records skipped, at most MaxPairs pairs), compared with CompareEncoded; pairs from
// CrossMatchThreshold on are linked, strongest first, and each connected group is a
// cluster (its members span two connections at least). Pairs within one connection are
// the connection's own run's (Match, over values). Truncated reports that the pair budget
// ran out.
func MatchAcross(recs []Encoded) (clusters []Cluster, truncated bool) {
	return link(len(recs), func(i int) []uint64 { return recs[i].Blocks },
		func(a, b int) (float64, []string, bool) {
			if recs[a].Conn == recs[b].Conn {
				return 0, nil, false
			}
			s, f, ok := CompareEncoded(recs[a], recs[b])
			return s, f, ok && s >= CrossMatchThreshold
		},
		func(i int) (int, string) { return recs[i].Dataset, recs[i].Key })
}
