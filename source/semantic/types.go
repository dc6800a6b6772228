package semantic

import (
	"strings"
	"time"

	"github.com/nyaruka/phonenumbers"
)

// The semantic types a column can have.
const (
	TypeEmail        = "email"
	TypePhone        = "phone"    // a valid number of the data country's numbering plan (Region says which)
	TypePhonePT      = "phone_pt" // a Portuguese number: +351/00351, or bare 9 digits when the country is PT
	TypeNIFPT        = "nif_pt"   // Portuguese tax number (NIF/NIPC); only when the country is PT
	TypePostalCodePT = "postal_code_pt"
	TypeIBAN         = "iban"
	TypeDateAsText   = "date_as_text"
	TypeUUID         = "uuid"
)

// DefaultCountry is the data country when none is given (the workspace default of the
// contract).
const DefaultCountry = "PT"

// IsEmail reports whether s looks like an e-mail address: one @, a non-empty local part of
// at most 64 bytes without spaces, and a domain of dot-separated labels whose last label
// has at least two letters. It checks the shape only, as mail servers do not say more.
func IsEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	if at < 1 || at > 64 || at != strings.LastIndexByte(s, '@') || len(s) > 254 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || c == ',' || c == ';' || c == '<' || c == '>' {
			return false
		}
	}
	domain := s[at+1:]
	dot := strings.LastIndexByte(domain, '.')
	if dot < 1 || strings.Contains(domain, "..") || domain[0] == '.' || domain[0] == '-' {
		return false
	}
	tld := domain[dot+1:]
	if len(tld) < 2 {
		return false
	}
	for i := 0; i < len(tld); i++ {
		if c := tld[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// IsUUID reports whether s is a UUID in its canonical 8-4-4-4-12 hexadecimal form.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
			continue
		}
		if !isHex(c) {
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// CheckNIF reports whether s has the shape of a Portuguese NIF/NIPC (nine digits whose first
// digit, or first two digits, belong to an attributed range) and whether it is valid (its
// ninth digit is the mod-11 check digit of the first eight).
func CheckNIF(s string) (shape, valid bool) {
	if len(s) != 9 || !allDigits(s) {
		return false, false
	}
	switch s[0] {
	case '1', '2', '3', '5', '6', '8':
	case '4':
		if s[1] != '5' {
			return false, false
		}
	case '7':
		if !strings.ContainsRune("0124579", rune(s[1])) {
			return false, false
		}
	case '9':
		if !strings.ContainsRune("0189", rune(s[1])) {
			return false, false
		}
	default:
		return false, false
	}
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(s[i]-'0') * (9 - i)
	}
	check := 11 - sum%11
	if check >= 10 {
		check = 0
	}
	return true, int(s[8]-'0') == check
}

// ValidNIF reports whether s is a Portuguese NIF/NIPC with a correct check digit.
func ValidNIF(s string) bool {
	_, valid := CheckNIF(s)
	return valid
}

// CheckIBAN reports whether s has the shape of an IBAN (two letters, two check digits and
// 11 to 30 letters or digits; spaces allowed between groups) and whether its check digits
// pass the ISO 13616 mod-97 test.
func CheckIBAN(s string) (shape, valid bool) {
	var buf [34]byte
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' {
			continue
		}
		if n == len(buf) {
			return false, false
		}
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		// The shape is checked as the characters come, so that most values that are not
		// IBANs are turned down at their first or third character.
		switch {
		case n < 2 && !isUpper(c), n >= 2 && n < 4 && !isDigit(c), n >= 4 && !isUpper(c) && !isDigit(c):
			return false, false
		}
		buf[n] = c
		n++
	}
	if n < 15 {
		return false, false
	}
	b := buf[:n]
	// Move the first four characters to the end, read letters as 10..35, take mod 97.
	rem := 0
	add := func(c byte) {
		if isDigit(c) {
			rem = (rem*10 + int(c-'0')) % 97
			return
		}
		v := int(c-'A') + 10
		rem = (rem*100 + v) % 97
	}
	for _, c := range b[4:] {
		add(c)
	}
	for _, c := range b[:4] {
		add(c)
	}
	return true, rem == 1
}

// ValidIBAN reports whether s is an IBAN whose check digits pass the mod-97 test.
func ValidIBAN(s string) bool {
	_, valid := CheckIBAN(s)
	return valid
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }

// IsPostalCodePT reports whether s is a Portuguese postal code (dddd-ddd).
func IsPostalCodePT(s string) bool {
	return len(s) == 8 && s[4] == '-' && allDigits(s[:4]) && allDigits(s[5:])
}

// CheckDateText reports whether s is a date written as text — ISO 8601 (yyyy-mm-dd, optionally
// followed by a time and zone) or dd/mm/yyyy — and whether the date and time exist
// (31/02/2024 has the shape but is not valid).
func CheckDateText(s string) (shape, valid bool) {
	switch {
	case len(s) >= 10 && isDigit(s[0]) && s[4] == '-' && s[7] == '-':
		if !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:10]) {
			return false, false
		}
		if len(s) > 10 && !isoTime(s[10:]) {
			return false, false
		}
		for _, layout := range isoLayouts {
			if _, err := time.Parse(layout, s); err == nil {
				return true, true
			}
		}
		return true, false
	case len(s) == 10 && s[2] == '/' && s[5] == '/':
		if !allDigits(s[:2]) || !allDigits(s[3:5]) || !allDigits(s[6:]) {
			return false, false
		}
		_, err := time.Parse("02/01/2006", s)
		return true, err == nil
	}
	return false, false
}

var isoLayouts = []string{
	"2006-01-02",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z07",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02 15:04",
}

// isoTime checks the shape of what follows an ISO date: a T or a space, hh:mm, then only
// characters a time and zone use.
func isoTime(rest string) bool {
	if len(rest) < 6 || (rest[0] != 'T' && rest[0] != ' ') || !isDigit(rest[1]) || !isDigit(rest[2]) || rest[3] != ':' {
		return false
	}
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		if !isDigit(c) && !strings.ContainsRune(":.+-Z", rune(c)) {
			return false
		}
	}
	return true
}

// phoneDigits returns the digits of s when s is written like a phone number (digits with an
// optional leading + and spaces, dots, dashes, slashes or brackets between them), and
// whether it started with +.
func phoneDigits(s string, buf []byte) (digits []byte, plus, ok bool) {
	digits = buf[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isDigit(c):
			if len(digits) == 16 {
				return nil, false, false
			}
			digits = append(digits, c)
		case c == '+' && i == 0:
			plus = true
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/':
		default:
			return nil, false, false
		}
	}
	return digits, plus, len(digits) >= 6
}

// CheckPhonePT reports whether s is a Portuguese phone number and whether the numbering plan
// says it is valid. Numbers with the +351 or 00351 prefix match whatever the country;
// bare nine-digit numbers starting with 2, 3 or 9 match only when country is PT, because
// elsewhere the same digits are a local number of that country.
func CheckPhonePT(s, country string) (match, valid bool) {
	nn, ok := phonePTShape(s, strings.EqualFold(country, "PT"))
	if !ok {
		return false, false
	}
	return true, validPhonePT(nn)
}

// phonePTShape is the cheap part of CheckPhonePT: whether s is written as a Portuguese
// number, and its national number.
func phonePTShape(s string, countryPT bool) (national uint64, ok bool) {
	var buf [16]byte
	d, plus, ok := phoneDigits(s, buf[:])
	if !ok {
		return 0, false
	}
	switch {
	case plus && len(d) == 12 && string(d[:3]) == "351":
		d = d[3:]
	case !plus && len(d) == 14 && string(d[:5]) == "00351":
		d = d[5:]
	case !plus && len(d) == 9 && countryPT:
	default:
		return 0, false
	}
	if d[0] != '2' && d[0] != '3' && d[0] != '9' {
		return 0, false
	}
	for _, c := range d {
		national = national*10 + uint64(c-'0')
	}
	return national, true
}

// validPhonePT asks the numbering plan whether a Portuguese national number is valid: the
// costly part of CheckPhonePT. The number is built rather than parsed: its parts are
// already known, and parsing would cost as much again as the validity check.
func validPhonePT(national uint64) bool {
	cc := int32(351)
	num := &phonenumbers.PhoneNumber{CountryCode: &cc, NationalNumber: &national}
	return phonenumbers.IsValidNumberForRegion(num, "PT")
}

// phoneShaped reports whether s is written like a phone number of 7 to 15 digits: the
// cheap part of IsPhone.
func phoneShaped(s string) bool {
	var buf [16]byte
	d, _, ok := phoneDigits(s, buf[:])
	return ok && len(d) >= 7 && len(d) <= 15
}

// IsPhone reports whether s is a valid phone number when read with region as the default
// numbering plan (numbers with a + or international prefix are read in their own plan).
func IsPhone(s, region string) bool {
	if !phoneShaped(s) {
		return false
	}
	num, err := phonenumbers.Parse(s, strings.ToUpper(region))
	return err == nil && phonenumbers.IsValidNumber(num)
}
