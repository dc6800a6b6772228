package semantic

import "strings"

// Threshold is the share of a column's non-null sampled values that must be of a type for
// the column to get that type.
const Threshold = 0.8

// ValidShare is the share of matching values that must also pass the check digit for a
// column to be nif_pt or iban: about one random nine-digit number in eleven passes the NIF
// check by chance and one code in 97 the IBAN check, so identifiers, phone numbers and
// product codes fall far below it while a column of real numbers with a few typing errors
// stays above.
const ValidShare = 0.5

// minPhoneProbe is how many values the detector sees before it stops parsing phone numbers
// in a column where fewer than half of them were phones (the parser is the costly part).
const minPhoneProbe = 256

// Result is the semantic type of a column decided on a sample.
type Result struct {
	Type    string
	Region  string // for TypePhone: the numbering plan (the data country); "" otherwise
	Total   int    // non-null values seen
	Matches int    // values of the type
	Valid   int    // of those, values that pass the type's validity check (= Matches when it has none)
}

// order is the precedence between types when several reach the threshold; only nif_pt,
// phone_pt and phone overlap in practice (nine-digit numbers).
var order = [...]string{TypeUUID, TypeEmail, TypeIBAN, TypeDateAsText, TypePostalCodePT, TypeNIFPT, TypePhonePT, TypePhone}

type tally struct{ matches, valid int }

// Detector decides the semantic type of one column from a stream of its non-null values.
// It keeps counts only, never a value. The zero value is not usable; call NewDetector.
type Detector struct {
	country  string
	total    int
	counts   map[string]*tally
	phoneOff bool
}

// NewDetector returns a detector for values of a dataset whose data country is country
// (ISO 3166-1 alpha-2; "" means DefaultCountry).
func NewDetector(country string) *Detector {
	country = strings.ToUpper(strings.TrimSpace(country))
	if country == "" {
		country = DefaultCountry
	}
	d := &Detector{country: country, counts: make(map[string]*tally, len(order))}
	for _, t := range order {
		d.counts[t] = &tally{}
	}
	return d
}

func (d *Detector) hit(t string, valid bool) {
	c := d.counts[t]
	c.matches++
	if valid {
		c.valid++
	}
}

// Add counts one non-null value.
func (d *Detector) Add(value string) {
	s := strings.TrimSpace(value)
	d.total++
	if s == "" {
		return
	}
	pt := d.country == "PT"
	switch {
	case IsUUID(s):
		d.hit(TypeUUID, true)
		return
	case strings.IndexByte(s, '@') >= 0:
		if IsEmail(s) {
			d.hit(TypeEmail, true)
		}
		return
	}
	if shape, valid := CheckIBAN(s); shape {
		d.hit(TypeIBAN, valid)
		return
	}
	if shape, valid := CheckDateText(s); shape {
		d.hit(TypeDateAsText, valid)
		return
	}
	if pt && IsPostalCodePT(s) {
		d.hit(TypePostalCodePT, true)
		return
	}
	if pt {
		if shape, valid := CheckNIF(s); shape {
			d.hit(TypeNIFPT, valid)
		}
	}
	if m, valid := CheckPhonePT(s, d.country); m {
		d.hit(TypePhonePT, valid)
		// A valid Portuguese number is a valid phone number: no second parse.
		if valid {
			d.hit(TypePhone, true)
		}
	} else if !d.phoneOff && IsPhone(s, d.country) {
		d.hit(TypePhone, true)
	}
	if d.total >= minPhoneProbe && d.counts[TypePhone].matches*2 < d.total {
		d.phoneOff = true
	}
}

// AddBytes is Add for a value held in a byte slice that the caller reuses.
func (d *Detector) AddBytes(value []byte) {
	d.Add(unsafeString(value))
}

// Result returns the column's type, or nil when no type reaches Threshold of the values
// seen (or nothing was seen).
func (d *Detector) Result() *Result {
	if d.total == 0 {
		return nil
	}
	for _, t := range order {
		c := d.counts[t]
		if float64(c.matches) < Threshold*float64(d.total) {
			continue
		}
		if (t == TypeNIFPT || t == TypeIBAN) && float64(c.valid) < ValidShare*float64(c.matches) {
			continue
		}
		if t == TypePhone && d.phoneOff {
			continue
		}
		r := &Result{Type: t, Total: d.total, Matches: c.matches, Valid: c.valid}
		if t == TypePhone {
			r.Region = d.country
		}
		return r
	}
	return nil
}

// Detect returns the semantic type of a column from its non-null values.
func Detect(values []string, country string) *Result {
	d := NewDetector(country)
	for _, v := range values {
		d.Add(v)
	}
	return d.Result()
}
