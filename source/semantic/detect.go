package semantic

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// Threshold is the share of a column's non-null sampled values that must be of a type for
// the column to get that type.
const Threshold = 0.8

// ValidShare is the share of matching values that must also pass the check digit for a
// column to be nif_pt or iban: about one random nine-digit number in eleven passes the NIF
// check by chance and one code in 97 the IBAN check, so identifiers, phone numbers and
// product codes fall far below it while a column of real numbers with a few typing errors
// stays above.
const ValidShare = 0.5

// PhoneChecks bounds how many values of one column the Detector checks against the
// telephone numbering plan. That check costs tens of microseconds a value, a hundred times
// the shape checks, so it runs on a random subset of the phone-shaped values: every value's
// shape is still read, and the share of valid numbers found in the subset is scaled to all
// of them (Result.Checked says how many were checked).
const PhoneChecks = 1000

// minPhoneProbe is how many values the detector sees before it stops checking values that
// are not Portuguese-shaped against the numbering plan in a column where fewer than half of
// them are phone numbers.
const minPhoneProbe = 256

// Result is the semantic type of a column decided on a sample.
type Result struct {
	Type   string
	Region string // for TypePhone: the numbering plan (the data country); "" otherwise
	Total  int    // non-null values seen
	// Matches is how many values are of the type. For TypePhone it is scaled from the
	// values checked against the numbering plan when not all of them were.
	Matches int
	// Valid is how many of the matches pass the type's validity check (= Matches when it
	// has none); scaled from the Checked ones when fewer than Matches were checked.
	Valid int
	// Checked is how many values the validity check ran on: Matches, except for the phone
	// types, checked on a random subset of at most about PhoneChecks values.
	Checked int
}

// Estimated reports whether Matches or Valid are scaled from a subset of the values.
func (r *Result) Estimated() bool { return r.Checked < r.Matches }

// The types, in precedence order when several reach the threshold; only nif_pt, phone_pt
// and phone overlap in practice (nine-digit numbers).
const (
	tUUID = iota
	tEmail
	tIBAN
	tDateAsText
	tPostalCodePT
	tNIFPT
	tPhonePT
	tPhone
	numTypes
)

var typeNames = [numTypes]string{TypeUUID, TypeEmail, TypeIBAN, TypeDateAsText, TypePostalCodePT, TypeNIFPT, TypePhonePT, TypePhone}

type tally struct{ matches, valid int }

// Detector decides the semantic type of one column from a stream of its non-null values.
// It keeps counts only, never a value. The zero value is not usable; call NewDetector.
type Detector struct {
	country  string
	pt       bool
	total    int
	counts   [numTypes]tally
	phones   phoneSubset
	phoneOff bool
}

// NewDetector returns a detector for values of a dataset whose data country is country
// (ISO 3166-1 alpha-2; "" means DefaultCountry).
func NewDetector(country string) *Detector {
	country = strings.ToUpper(strings.TrimSpace(country))
	if country == "" {
		country = DefaultCountry
	}
	return &Detector{country: country, pt: country == "PT", phones: phoneSubset{rate: 1, budget: PhoneChecks}}
}

// ExpectValues tells the detector about how many values it will see, so that it checks
// phone numbers at a rate giving about PhoneChecks checks over the whole stream rather
// than checking every value until the bound and then thinning what it checked. The bound
// holds without it.
func (d *Detector) ExpectValues(n int) {
	if n > PhoneChecks && d.total == 0 {
		d.phones.rate = float64(PhoneChecks) / float64(n)
	}
}

func (d *Detector) hit(t int, valid bool) {
	c := &d.counts[t]
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
	switch {
	case IsUUID(s):
		d.hit(tUUID, true)
		return
	case strings.IndexByte(s, '@') >= 0:
		if IsEmail(s) {
			d.hit(tEmail, true)
		}
		return
	}
	if shape, valid := CheckIBAN(s); shape {
		d.hit(tIBAN, valid)
		return
	}
	if shape, valid := CheckDateText(s); shape {
		d.hit(tDateAsText, valid)
		return
	}
	if d.pt && IsPostalCodePT(s) {
		d.hit(tPostalCodePT, true)
		return
	}
	if d.pt {
		if shape, valid := CheckNIF(s); shape {
			d.hit(tNIFPT, valid)
		}
	}
	if nn, ok := phonePTShape(s, d.pt); ok {
		// A valid Portuguese number is a valid phone number: no second check.
		d.counts[tPhonePT].matches++
		d.phones.offer(true, func() bool { return validPhonePT(nn) })
	} else if !d.phoneOff && phoneShaped(s) {
		d.phones.offer(false, func() bool { return IsPhone(s, d.country) })
	}
	if !d.phoneOff && d.total >= minPhoneProbe && d.phones.phoneMatches()*2 < float64(d.total) {
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
	counts := d.counts
	ph := &d.phones
	counts[tPhonePT].valid = int(math.Round(ph.ptValid()))
	counts[tPhone].matches = int(math.Round(ph.phoneMatches()))
	counts[tPhone].valid = counts[tPhone].matches
	for t, c := range counts {
		if float64(c.matches) < Threshold*float64(d.total) {
			continue
		}
		if (t == tNIFPT || t == tIBAN) && float64(c.valid) < ValidShare*float64(c.matches) {
			continue
		}
		if t == tPhone && d.phoneOff {
			continue
		}
		r := &Result{Type: typeNames[t], Total: d.total, Matches: c.matches, Valid: c.valid, Checked: c.matches}
		switch t {
		case tPhonePT:
			r.Checked = ph.ptChecked
		case tPhone:
			r.Region = d.country
			r.Checked = ph.ptChecked + ph.otherChecked
			if ph.ptChecked+ph.otherChecked == ph.ptShaped+ph.otherShaped {
				r.Checked = r.Matches // every value was checked: the counts are exact
			}
		}
		if r.Checked > r.Matches {
			r.Checked = r.Matches
		}
		return r
	}
	return nil
}

// Detect returns the semantic type of a column from its non-null values.
func Detect(values []string, country string) *Result {
	d := NewDetector(country)
	d.ExpectValues(len(values))
	for _, v := range values {
		d.Add(v)
	}
	return d.Result()
}

// phoneSubset checks phone-shaped values against the numbering plan on a Bernoulli subset
// of them: each value gets a uniform random tag and is checked when its tag is below rate.
// When more than budget checks are held, rate halves and the checks whose tag is no longer
// below it are dropped, so the checks held are always a Bernoulli(rate) subset of every
// phone-shaped value offered, whatever the order of the stream, and never more than budget.
type phoneSubset struct {
	rate   float64
	budget int
	checks []phoneCheck
	// ptShaped and otherShaped count every value offered: Portuguese-shaped, and other
	// phone-shaped values.
	ptShaped, otherShaped int
	// ptChecked, ptOK, otherChecked, otherOK count the checks held.
	ptChecked, ptOK, otherChecked, otherOK int
}

type phoneCheck struct {
	tag float64
	pt  bool // Portuguese-shaped (ok: valid for PT); else ok: a valid number of the country
	ok  bool
}

func (p *phoneSubset) offer(pt bool, check func() bool) {
	if pt {
		p.ptShaped++
	} else {
		p.otherShaped++
	}
	tag := rand.Float64()
	if tag >= p.rate {
		return
	}
	c := phoneCheck{tag: tag, pt: pt, ok: check()}
	p.checks = append(p.checks, c)
	p.count(c, 1)
	for len(p.checks) > p.budget {
		p.rate /= 2
		p.checks = slices.DeleteFunc(p.checks, func(c phoneCheck) bool {
			if c.tag >= p.rate {
				p.count(c, -1)
				return true
			}
			return false
		})
	}
}

func (p *phoneSubset) count(c phoneCheck, delta int) {
	ok := 0
	if c.ok {
		ok = delta
	}
	if c.pt {
		p.ptChecked += delta
		p.ptOK += ok
	} else {
		p.otherChecked += delta
		p.otherOK += ok
	}
}

// ptValid is the number of Portuguese-shaped values estimated valid: their count times
// the valid share among those checked.
func (p *phoneSubset) ptValid() float64 {
	if p.ptChecked == 0 {
		return 0
	}
	return float64(p.ptShaped) * float64(p.ptOK) / float64(p.ptChecked)
}

// phoneMatches is the number of values estimated to be valid phone numbers: the valid
// Portuguese ones and the other phone-shaped values the numbering plan accepts.
func (p *phoneSubset) phoneMatches() float64 {
	m := p.ptValid()
	if p.otherChecked > 0 {
		m += float64(p.otherShaped) * float64(p.otherOK) / float64(p.otherChecked)
	}
	return m
}
