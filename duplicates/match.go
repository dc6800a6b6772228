package duplicates

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Fields a record is compared on, and their weights in the score.
const (
	FieldNIF   = "nif"
	FieldEmail = "email"
	FieldPhone = "phone"
	FieldName  = "name"
)

var weights = map[string]float64{FieldNIF: 3, FieldEmail: 2, FieldPhone: 2, FieldName: 2}

// fieldOrder is the order fields are listed in (matched_on).
var fieldOrder = []string{FieldNIF, FieldEmail, FieldPhone, FieldName}

// Confidence bands.
const (
	BandExact = "exact"
	BandHigh  = "high"
	BandLow   = "low"
)

// Thresholds of the comparison: a pair below MatchThreshold is not a duplicate; from
// HighThreshold on it is in the band high, below it low. Exact pairs (every field both
// records hold is equal after normalization, two fields at least) have confidence 1.
const (
	MatchThreshold = 0.82
	HighThreshold  = 0.92
	// nifVeto: two records whose tax numbers are further apart than one typo are
	// different entities, whatever else they share.
	nifVeto = 0.85
	// MaxBlock bounds a block: a blocking key shared by more records (a common first
	// name, a shared switchboard number) proposes no pairs.
	MaxBlock = 60
	// MaxPairs bounds the candidate pairs compared in one run.
	MaxPairs = 400_000
)

// Record is one row of a dataset as the comparison sees it: its dataset (an index into
// the run's datasets), its row key, and the normalized fields ("" when absent). Records
// live in memory for one run only; only dataset ids, row keys and confidences are kept.
type Record struct {
	Dataset int
	Key     string
	NIF     string
	Email   string
	Phone   string
	Name    string
}

// Normalize puts a record's fields in the form they are compared in: NIF digits only
// (a PT prefix dropped), e-mail lower-case and trimmed, the phone's last nine digits,
// the name lower-case, without accents or punctuation, its words in order. The source
// already computed most of it (see Query); this is idempotent.
func (r Record) Normalize() Record {
	r.NIF = NormalizeNIF(r.NIF)
	r.Email = strings.ToLower(strings.TrimSpace(r.Email))
	r.Phone = NormalizePhone(r.Phone)
	r.Name = NormalizeName(r.Name)
	return r
}

// NormalizeNIF keeps the digits of a tax number (a leading country prefix goes away).
func NormalizeNIF(s string) string { return digits(s) }

// NormalizePhone keeps the last nine digits of a phone number (the national number of a
// Portuguese or Spanish one, whatever prefix was typed).
func NormalizePhone(s string) string {
	d := digits(s)
	if len(d) > 9 {
		d = d[len(d)-9:]
	}
	return d
}

func digits(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c >= '0' && c <= '9' {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// NormalizeName folds a name: lower case, accents removed, punctuation to spaces, single
// spaces.
func NormalizeName(s string) string {
	var b strings.Builder
	for _, c := range norm.NFD.String(strings.ToLower(s)) {
		switch {
		case unicode.Is(unicode.Mn, c):
		case unicode.IsLetter(c) || unicode.IsDigit(c):
			b.WriteRune(c)
		default:
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// stopTokens are name words too common to block on.
var stopTokens = map[string]bool{"da": true, "de": true, "do": true, "das": true, "dos": true, "e": true, "lda": true, "sa": true,
	"the": true, "and": true, "del": true, "la": true, "y": true}

// blockKeys are the keys a record is grouped by: its tax number, e-mail, e-mail's local
// part, phone, and each name word of three letters or more.
func blockKeys(r Record) []string {
	var ks []string
	if r.NIF != "" {
		ks = append(ks, "n:"+r.NIF)
	}
	if r.Email != "" {
		ks = append(ks, "e:"+r.Email)
		if at := strings.IndexByte(r.Email, '@'); at > 2 {
			ks = append(ks, "l:"+r.Email[:at])
		}
	}
	if r.Phone != "" {
		ks = append(ks, "p:"+r.Phone)
	}
	for _, w := range strings.Fields(r.Name) {
		if len(w) >= 3 && !stopTokens[w] {
			ks = append(ks, "t:"+w)
		}
	}
	return ks
}

// Compare scores two normalized records: the weighted mean of their fields' similarities
// over the fields both hold (at least two), 1 when all of them are equal. ok is false
// when they cannot be compared or their tax numbers differ by more than a typo.
func Compare(a, b Record) (score float64, fields []string, ok bool) {
	var sum, wsum float64
	exact := true
	for _, f := range fieldOrder {
		x, y := field(a, f), field(b, f)
		if x == "" || y == "" {
			continue
		}
		var s float64
		switch f {
		case FieldName:
			s = nameSimilarity(x, y)
		default:
			s = editSimilarity(x, y)
		}
		if f == FieldNIF && s < nifVeto {
			return 0, nil, false
		}
		if x != y {
			exact = false
		}
		fields = append(fields, f)
		sum += weights[f] * s
		wsum += weights[f]
	}
	return scored(fields, exact, sum, wsum)
}

// scored ends Compare and CompareEncoded: no score over fewer than two fields, 1 when every
// field compared is equal, else the weighted mean, kept under 1 and cut to three decimals.
func scored(fields []string, exact bool, sum, wsum float64) (float64, []string, bool) {
	if len(fields) < 2 {
		return 0, nil, false
	}
	if exact {
		return 1, fields, true
	}
	return math.Floor(math.Min(sum/wsum, 0.999)*1000) / 1000, fields, true
}

func field(r Record, f string) string {
	switch f {
	case FieldNIF:
		return r.NIF
	case FieldEmail:
		return r.Email
	case FieldPhone:
		return r.Phone
	default:
		return r.Name
	}
}

// editSimilarity is 1 − Levenshtein distance / the longer length.
func editSimilarity(a, b string) float64 {
	if a == b {
		return 1
	}
	ra, rb := []rune(a), []rune(b)
	n := max(len(ra), len(rb))
	if n == 0 {
		return 1
	}
	return 1 - float64(levenshtein(ra, rb))/float64(n)
}

// levenshtein is the optimal-string-alignment distance: insertions, deletions,
// substitutions and transpositions of neighbours, one edit each.
func levenshtein(a, b []rune) int {
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}

// nameSimilarity is the Jaro-Winkler similarity of the names with their words sorted
// (a name written surname first matches), the better of sorted and as written.
func nameSimilarity(a, b string) float64 {
	if a == b {
		return 1
	}
	s := jaroWinkler(a, b)
	wa, wb := strings.Fields(a), strings.Fields(b)
	sort.Strings(wa)
	sort.Strings(wb)
	return math.Max(s, jaroWinkler(strings.Join(wa, " "), strings.Join(wb, " ")))
}

func jaroWinkler(a, b string) float64 {
	ra, rb := []rune(a), []rune(b)
	if len(ra) == 0 || len(rb) == 0 {
		return 0
	}
	win := max(len(ra), len(rb))/2 - 1
	if win < 0 {
		win = 0
	}
	ma := make([]bool, len(ra))
	mb := make([]bool, len(rb))
	m := 0
	for i := range ra {
		lo, hi := max(0, i-win), min(len(rb), i+win+1)
		for j := lo; j < hi; j++ {
			if !mb[j] && ra[i] == rb[j] {
				ma[i], mb[j] = true, true
				m++
				break
			}
		}
	}
	if m == 0 {
		return 0
	}
	t, j := 0, 0
	for i := range ra {
		if !ma[i] {
			continue
		}
		for !mb[j] {
			j++
		}
		if ra[i] != rb[j] {
			t++
		}
		j++
	}
	fm := float64(m)
	jaro := (fm/float64(len(ra)) + fm/float64(len(rb)) + (fm-float64(t)/2)/fm) / 3
	p := 0
	for p < min(4, len(ra), len(rb)) && ra[p] == rb[p] {
		p++
	}
	return jaro + float64(p)*0.1*(1-jaro)
}

// Member is one record of a cluster: its dataset (index), row key, its best confidence
// against another member, and whether that is an exact match.
type Member struct {
	Dataset    int
	Key        string
	Confidence float64
}

// Exact reports whether the member matches another member exactly.
func (m Member) Exact() bool { return m.Confidence == 1 }

// Cluster is a group of records of one entity: its confidence is the weakest link that
// holds it together (1 only when every link is exact), its band, and the fields its links
// compared.
type Cluster struct {
	Members    []Member
	Confidence float64
	Band       string
	MatchedOn  []string
}

// BandOf is the band of a confidence.
func BandOf(c float64) string {
	switch {
	case c >= 1:
		return BandExact
	case c >= HighThreshold:
		return BandHigh
	default:
		return BandLow
	}
}

type edge struct {
	a, b   int
	score  float64
	fields []string
}

// Match clusters normalized records: candidate pairs are the records sharing a blocking
// key (blocks of more than MaxBlock records skipped, at most MaxPairs pairs), compared
// with Compare; pairs from MatchThreshold on are linked, strongest first, and each
// connected group of two records or more is a cluster. Truncated reports that the pair
// budget ran out.
func Match(recs []Record) (clusters []Cluster, truncated bool) {
	return link(len(recs), func(i int) []string { return blockKeys(recs[i]) },
		func(a, b int) (float64, []string, bool) {
			if recs[a].Dataset == recs[b].Dataset && recs[a].Key == recs[b].Key {
				return 0, nil, false
			}
			s, f, ok := Compare(recs[a], recs[b])
			return s, f, ok && s >= MatchThreshold
		},
		func(i int) (int, string) { return recs[i].Dataset, recs[i].Key })
}

// link is the clustering both matchers share: n records, their blocking keys, a
// comparison of a candidate pair (ok: the pair is a match) and each record's dataset and
// row key.
func link[K cmp.Ordered](n int, keysOf func(i int) []K, pair func(a, b int) (float64, []string, bool), member func(i int) (int, string)) (clusters []Cluster, truncated bool) {
	blocks := map[K][]int{}
	for i := range n {
		for _, k := range keysOf(i) {
			blocks[k] = append(blocks[k], i)
		}
	}
	keys := make([]K, 0, len(blocks))
	for k, b := range blocks {
		if len(b) >= 2 && len(b) <= MaxBlock {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	seen := map[[2]int]bool{}
	var edges []edge
	for _, k := range keys {
		b := blocks[k]
		for x := 0; x < len(b); x++ {
			for y := x + 1; y < len(b); y++ {
				p := [2]int{b[x], b[y]}
				if seen[p] {
					continue
				}
				if len(seen) >= MaxPairs {
					truncated = true
					break
				}
				seen[p] = true
				if s, f, ok := pair(p[0], p[1]); ok {
					edges = append(edges, edge{a: p[0], b: p[1], score: s, fields: f})
				}
			}
		}
	}
	sort.SliceStable(edges, func(i, j int) bool { return edges[i].score > edges[j].score })
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	weakest := map[int]float64{}
	best := map[int]float64{}
	on := map[int]map[string]bool{}
	for _, e := range edges {
		best[e.a] = math.Max(best[e.a], e.score)
		best[e.b] = math.Max(best[e.b], e.score)
		ra, rb := find(e.a), find(e.b)
		if ra == rb {
			continue
		}
		w := e.score
		if v, ok := weakest[ra]; ok {
			w = math.Min(w, v)
		}
		if v, ok := weakest[rb]; ok {
			w = math.Min(w, v)
		}
		f := map[string]bool{}
		for _, m := range []map[string]bool{on[ra], on[rb]} {
			for k := range m {
				f[k] = true
			}
		}
		for _, k := range e.fields {
			f[k] = true
		}
		parent[rb] = ra
		weakest[ra], on[ra] = w, f
		delete(weakest, rb)
		delete(on, rb)
	}
	groups := map[int][]int{}
	for i := range n {
		if _, linked := best[i]; linked {
			groups[find(i)] = append(groups[find(i)], i)
		}
	}
	for root, idx := range groups {
		c := Cluster{Confidence: weakest[root], Band: BandOf(weakest[root])}
		for _, f := range fieldOrder {
			if on[root][f] {
				c.MatchedOn = append(c.MatchedOn, f)
			}
		}
		for _, i := range idx {
			ds, key := member(i)
			c.Members = append(c.Members, Member{Dataset: ds, Key: key, Confidence: best[i]})
		}
		sort.Slice(c.Members, func(i, j int) bool {
			if c.Members[i].Dataset != c.Members[j].Dataset {
				return c.Members[i].Dataset < c.Members[j].Dataset
			}
			return c.Members[i].Key < c.Members[j].Key
		})
		clusters = append(clusters, c)
	}
	sort.Slice(clusters, func(i, j int) bool {
		if clusters[i].Confidence != clusters[j].Confidence {
			return clusters[i].Confidence > clusters[j].Confidence
		}
		a, b := clusters[i].Members[0], clusters[j].Members[0]
		if a.Dataset != b.Dataset {
			return a.Dataset < b.Dataset
		}
		return a.Key < b.Key
	})
	return clusters, truncated
}
