package duplicates

import (
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/vigia-data/vigia/demo"
)

// The labelled reference set: customers of the demo packs' kind (Portuguese names, valid
// NIFs, e-mails derived from the names, mobile numbers typed the ways people type them)
// spread over two tables, each record labelled with the entity it belongs to. Some
// entities have an exact copy, some a copy with typos (a letter dropped, swapped or
// replaced in the name or the e-mail, accents lost, a phone digit wrong, the NIF left
// out), some both; and there are hard negatives: people of one household (same surnames
// and phone, their own NIF and mostly their own e-mail) and namesakes (same full name, nothing else in
// common). It is generated from a fixed seed, so every Vigia measures the same set.
const (
	ReferenceSeed     = 18
	ReferenceEntities = 600
)

// RefRecord is a record of the reference set with its entity label.
type RefRecord struct {
	Record
	Entity int
}

// ReferenceSet returns the labelled reference set (records normalized).
func ReferenceSet() []RefRecord {
	r := rand.New(rand.NewPCG(ReferenceSeed, ReferenceSeed))
	var out []RefRecord
	key := 0
	add := func(ds, entity int, rec Record) {
		key++
		rec.Dataset, rec.Key = ds, itoa(key)
		out = append(out, RefRecord{Record: rec.Normalize(), Entity: entity})
	}
	entity := 0
	for range ReferenceEntities {
		entity++
		name := demo.PersonName(r)
		base := Record{Name: name, NIF: demo.ValidNIF(r), Email: demo.Email(r, name), Phone: demo.PTMobile(r)}
		if r.IntN(100) < 15 {
			base.NIF = ""
		}
		if r.IntN(100) < 10 {
			base.Email = ""
		}
		first := base
		first.Phone = demo.DialVariant(r, base.Phone)
		add(0, entity, first)
		switch n := r.IntN(100); {
		case n < 35: // alone
		case n < 60: // an exact copy in the other table, typed differently
			add(1, entity, exactCopy(r, base))
		case n < 85: // a copy with typos
			add(1, entity, typoCopy(r, base))
		default: // both
			add(1, entity, exactCopy(r, base))
			add(1, entity, typoCopy(r, base))
		}
		switch n := r.IntN(100); {
		case n < 12: // someone of the same household
			entity++
			words := strings.Fields(name)
			other := demo.PersonName(r)
			ow := strings.Fields(other)
			hname := strings.Join(append([]string{ow[0]}, words[len(words)-2:]...), " ")
			h := Record{Name: hname, NIF: demo.ValidNIF(r), Email: demo.Email(r, hname), Phone: demo.DialVariant(r, base.Phone)}
			if r.IntN(100) < 30 && base.Email != "" {
				h.Email = base.Email // the family's one mailbox
			}
			if r.IntN(100) < 15 {
				h.NIF = ""
			}
			add(r.IntN(2), entity, h)
		case n < 18: // a namesake
			entity++
			add(r.IntN(2), entity, Record{Name: name, NIF: demo.ValidNIF(r), Email: demo.Email(r, name), Phone: demo.PTMobile(r)})
		}
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// exactCopy is the same record as another system keeps it: upper-case name, the e-mail
// with capitals, the phone with its prefix.
func exactCopy(r *rand.Rand, b Record) Record {
	c := b
	if r.IntN(2) == 0 {
		c.Name = strings.ToUpper(c.Name)
	}
	if r.IntN(2) == 0 && c.Email != "" {
		c.Email = strings.ToUpper(c.Email[:1]) + c.Email[1:]
	}
	c.Phone = demo.DialVariant(r, b.Phone)
	if r.IntN(3) == 0 && c.NIF != "" {
		c.NIF = "PT" + c.NIF
	}
	return c
}

// typoCopy is the record typed again by hand: one or two slips.
func typoCopy(r *rand.Rand, b Record) Record {
	c := b
	c.Phone = demo.DialVariant(r, b.Phone)
	slips := 1 + r.IntN(3)
	for range slips {
		switch r.IntN(6) {
		case 0:
			c.Name = typo(r, c.Name)
		case 1:
			c.Name = foldAccents(c.Name)
			c.Name = typo(r, c.Name)
		case 2:
			if c.Email != "" {
				at := strings.IndexByte(c.Email, '@')
				c.Email = typo(r, c.Email[:at]) + c.Email[at:]
			} else {
				c.Name = typo(r, c.Name)
			}
		case 3:
			p := []byte(NormalizePhone(c.Phone))
			i := r.IntN(len(p)-1) + 1
			p[i] = byte('0' + (int(p[i]-'0')+1+r.IntN(8))%10)
			c.Phone = string(p)
		case 4:
			c.NIF = ""
		default:
			w := strings.Fields(c.Name)
			if len(w) > 3 {
				w = append(w[:1], w[2:]...) // the second first name left out
			}
			c.Name = strings.Join(w, " ")
			c.Name = typo(r, c.Name)
		}
	}
	return c
}

// typo drops, doubles, swaps or replaces one letter past the first.
func typo(r *rand.Rand, s string) string {
	rs := []rune(s)
	if len(rs) < 4 {
		return s
	}
	i := 1 + r.IntN(len(rs)-2)
	switch r.IntN(4) {
	case 0:
		return string(append(rs[:i:i], rs[i+1:]...))
	case 1:
		return string(append(append(rs[:i+1:i+1], rs[i]), rs[i+1:]...))
	case 2:
		rs[i], rs[i+1] = rs[i+1], rs[i]
		return string(rs)
	default:
		rs[i] = rune('a' + r.IntN(26))
		return string(rs)
	}
}

func foldAccents(s string) string {
	var b strings.Builder
	for _, w := range strings.Fields(s) {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(NormalizeName(w))
	}
	return b.String()
}

// Precision is what the matcher achieves on the reference set.
type Precision struct {
	// ByBand is the share of the record pairs put in one cluster of the band that are the
	// same entity; Pairs counts those pairs.
	ByBand map[string]float64
	Pairs  map[string]int
	// Recall is the share of the reference's same-entity pairs found in one cluster.
	Recall  float64
	Records int
}

var (
	refOnce sync.Once
	refPrec Precision
)

// ReferencePrecision measures the matcher on the reference set, once per process.
func ReferencePrecision() Precision {
	refOnce.Do(func() { refPrec = Measure(ReferenceSet()) })
	return refPrec
}

// Measure runs the matcher on a labelled set and measures its precision per band and its
// recall.
func Measure(set []RefRecord) Precision {
	recs := make([]Record, len(set))
	for i, s := range set {
		recs[i] = s.Record
	}
	clusters, _ := Match(recs)
	return score(set, clusters)
}

var (
	crossOnce sync.Once
	crossPrec Precision
)

// ReferencePrecisionAcross measures the cross-connection matcher (hashes only) on the
// reference set, its two tables taken as two connections, once per process.
func ReferencePrecisionAcross() Precision {
	crossOnce.Do(func() { crossPrec = MeasureAcross(ReferenceSet()) })
	return crossPrec
}

// MeasureAcross runs the cross-connection matcher on a labelled set whose datasets are
// taken as connections (each record hashed under one run key) and measures its precision
// per band and its recall over the pairs of records in different datasets.
func MeasureAcross(set []RefRecord) Precision {
	enc := NewEncoder()
	recs := make([]Encoded, len(set))
	for i, s := range set {
		recs[i] = enc.Encode(s.Dataset, s.Record)
	}
	clusters, _ := MatchAcross(recs)
	return score(set, clusters)
}

// score measures clusters against the set's labels: precision per band over the record
// pairs put in one cluster, recall over the same-entity pairs.
func score(set []RefRecord, clusters []Cluster) Precision {
	label := map[[2]string]int{}
	same := map[int]int{}
	for _, s := range set {
		label[[2]string{itoa(s.Dataset), s.Key}] = s.Entity
		same[s.Entity]++
	}
	truePairs := 0
	for _, n := range same {
		truePairs += n * (n - 1) / 2
	}
	p := Precision{ByBand: map[string]float64{}, Pairs: map[string]int{}, Records: len(set)}
	good := map[string]int{}
	found := 0
	for _, c := range clusters {
		for i := range c.Members {
			for j := i + 1; j < len(c.Members); j++ {
				a := label[[2]string{itoa(c.Members[i].Dataset), c.Members[i].Key}]
				b := label[[2]string{itoa(c.Members[j].Dataset), c.Members[j].Key}]
				p.Pairs[c.Band]++
				if a == b {
					good[c.Band]++
					found++
				}
			}
		}
	}
	for _, b := range []string{BandExact, BandHigh, BandLow} {
		if p.Pairs[b] > 0 {
			p.ByBand[b] = round3(float64(good[b]) / float64(p.Pairs[b]))
		}
	}
	if truePairs > 0 {
		p.Recall = round3(float64(found) / float64(truePairs))
	}
	return p
}

func round3(f float64) float64 { return float64(int(f*1000+0.5)) / 1000 }
