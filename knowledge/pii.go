package knowledge

import (
	"slices"
	"strings"
	"unicode"

	"github.com/vigia-data/vigia/source/semantic"
)

// The personal-data kinds the gate recognises in an entry's text, named as the
// semantic types of columns.
const (
	PIIEmail = semantic.TypeEmail
	PIINIF   = semantic.TypeNIFPT
	PIIPhone = semantic.TypePhone
	PIIIBAN  = semantic.TypeIBAN
)

// maxGroup is how many space-separated groups a phone number or an IBAN may be written
// in ("912 345 678", "PT50 0002 0123 1234 5678 9015 4").
const maxGroup = 9

// PersonalData returns the kinds of personal data in text (sorted, without duplicates):
// e-mail addresses, Portuguese tax numbers with a valid check digit, IBANs whose check
// digits pass, and phone numbers valid in the numbering plan of country (numbers with
// a + or 00 prefix in their own plan), as the scans' semantic detectors read column
// values. It never returns the values themselves.
func PersonalData(text, country string) []string {
	if country == "" {
		country = semantic.DefaultCountry
	}
	tokens := strings.FieldsFunc(text, func(r rune) bool {
		return unicode.IsSpace(r) || r == ',' || r == ';' || r == ':' || r == '=' || r == '|' || r == '"' || r == '\''
	})
	for i, t := range tokens {
		tokens[i] = strings.TrimFunc(t, func(r rune) bool {
			return r != '+' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})
	}
	found := map[string]bool{}
	for i, t := range tokens {
		if t == "" {
			continue
		}
		if semantic.IsEmail(strings.TrimPrefix(t, "mailto")) {
			found[PIIEmail] = true
			continue
		}
		nif := t
		if len(t) == 11 && strings.EqualFold(t[:2], "PT") {
			nif = t[2:]
		}
		if semantic.ValidNIF(nif) {
			found[PIINIF] = true
		}
		// Phones and IBANs may be written in groups: try the token with the ones after it.
		joined := ""
		for j := i; j < len(tokens) && j < i+maxGroup; j++ {
			if j > i {
				joined += " "
			}
			joined += tokens[j]
			if phoneLike(joined) && phone(joined, country) {
				found[PIIPhone] = true
				break
			}
			if semantic.ValidIBAN(joined) {
				found[PIIIBAN] = true
				break
			}
			if !phoneLike(joined) && !ibanLike(joined) {
				break
			}
		}
	}
	out := make([]string, 0, len(found))
	for k := range found {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// phoneLike reports whether s holds only what phone numbers are written with.
func phoneLike(s string) bool {
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '+' && i == 0, r == ' ', r == '-', r == '.', r == '(', r == ')':
		default:
			return false
		}
	}
	return digits > 0 && digits <= 15
}

// ibanLike reports whether s could still grow into an IBAN: letters and digits in
// groups, starting with two letters.
func ibanLike(s string) bool {
	if len(s) < 2 || len(s) > 42 || !isLetter(s[0]) || !isLetter(s[1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != ' ' && !isLetter(c) && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// phone reports whether s is a valid phone number: a Portuguese one, or one of the
// country's plan with at least 9 digits (shorter runs of digits are too often years,
// amounts or codes), or any plan's with a + or 00 prefix.
func phone(s, country string) bool {
	if match, valid := semantic.CheckPhonePT(s, country); match {
		return valid
	}
	digits := 0
	for _, r := range s {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	if digits < 9 {
		return false
	}
	if strings.HasPrefix(s, "00") {
		s = "+" + s[2:]
	}
	return semantic.IsPhone(s, country)
}
