package demo_test

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nyaruka/phonenumbers"

	"github.com/vigia-data/vigia/demo"
)

// nifValid is the test's own NIF checker: nine digits, the ninth the mod-11 check digit of
// the first eight with weights 9..2, where 10 and 11 give 0.
func nifValid(s string) bool {
	if len(s) != 9 {
		return false
	}
	sum := 0
	for i := 0; i < 9; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
		if i < 8 {
			sum += int(s[i]-'0') * (9 - i)
		}
	}
	check := 11 - sum%11
	if check >= 10 {
		check = 0
	}
	return int(s[8]-'0') == check
}

// ibanValid is the test's own ISO 13616 checker: spaces ignored, the first four characters
// moved to the end, letters read as 10..35, the number modulo 97 must be 1.
func ibanValid(s string) bool {
	s = strings.ReplaceAll(s, " ", "")
	if len(s) < 15 || len(s) > 34 {
		return false
	}
	rem := 0
	for _, c := range s[4:] + s[:4] {
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return rem == 1
}

var (
	postalRe = regexp.MustCompile(`^\d{4}-\d{3}$`)
	uuidRe   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	ibanPTRe = regexp.MustCompile(`^PT50\d{21}$`)
)

func TestCheckersAgreeWithPublishedExamples(t *testing.T) {
	cases := []struct {
		name  string
		check func(string) bool
		in    string
		want  bool
	}{
		{"NIFClassicExample", nifValid, "123456789", true},
		{"NIFWrongCheckDigit", nifValid, "123456780", false},
		{"NIFCheckTenBecomesZero", nifValid, "500000000", true},
		{"NIFCheckOne", nifValid, "100000002", true},
		{"NIFTooShort", nifValid, "12345678", false},
		{"NIFLetters", nifValid, "12345678A", false},
		{"IBANPortugalRegistryExample", ibanValid, "PT50000201231234567890154", true},
		{"IBANPortugalMistyped", ibanValid, "PT50000201231234567890155", false},
		{"IBANUKExample", ibanValid, "GB82WEST12345698765432", true},
		{"IBANGrouped", ibanValid, "GB82 WEST 1234 5698 7654 32", true},
		{"IBANSwappedDigits", ibanValid, "GB82WEST12345698765423", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.check(c.in); got != c.want {
				t.Fatalf("check(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func isPTPhone(s string) bool {
	n, err := phonenumbers.Parse(s, "PT")
	return err == nil && phonenumbers.IsValidNumberForRegion(n, "PT")
}

func TestGeneratorsProduceValuesOfTheirKind(t *testing.T) {
	cases := []struct {
		name  string
		gen   func(r *rand.Rand) string
		check func(string) bool
	}{
		{"ValidNIFPassesMod11", demo.ValidNIF, func(s string) bool { return nifValid(s) && strings.ContainsRune("123", rune(s[0])) }},
		{"ValidNIPCPassesMod11", demo.ValidNIPC, func(s string) bool { return nifValid(s) && s[0] == '5' }},
		{"InvalidNIFKeepsShapeFailsMod11", demo.InvalidNIF, func(s string) bool {
			return len(s) == 9 && strings.ContainsRune("123", rune(s[0])) && !nifValid(s)
		}},
		{"ValidIBANPTPassesMod97", demo.ValidIBANPT, func(s string) bool { return ibanPTRe.MatchString(s) && ibanValid(s) }},
		{"InvalidIBANPTKeepsShapeFailsMod97", demo.InvalidIBANPT, func(s string) bool { return ibanPTRe.MatchString(s) && !ibanValid(s) }},
		{"GroupedIBANStillValid", func(r *rand.Rand) string { return demo.GroupIBAN(demo.ValidIBANPT(r)) }, func(s string) bool {
			return len(s) == 31 && s[4] == ' ' && ibanValid(s)
		}},
		{"PTMobileIsValidMobile", demo.PTMobile, func(s string) bool {
			return len(s) == 9 && strings.Contains("91 92 93 96", s[:2]) && isPTPhone(s)
		}},
		{"PTLandlineIsValidFixedLine", demo.PTLandline, func(s string) bool {
			return len(s) == 9 && (s[:2] == "21" || s[:2] == "22") && isPTPhone(s)
		}},
		{"PTLandlineInEveryCityIsValid", func(r *rand.Rand) string {
			names := demo.CityNames()
			return demo.PTLandlineIn(r, names[r.IntN(len(names))])
		}, func(s string) bool { return len(s) == 9 && s[0] == '2' && isPTPhone(s) }},
		{"DialVariantStaysValid", func(r *rand.Rand) string { return demo.DialVariant(r, demo.PTMobile(r)) }, isPTPhone},
		{"PostalCodePTIsDddd-ddd", demo.PostalCodePT, postalRe.MatchString},
		{"InvalidPostalCodePTIsNot", demo.InvalidPostalCodePT, func(s string) bool { return !postalRe.MatchString(s) }},
		{"UUIDIsVersion4", demo.UUID, uuidRe.MatchString},
		{"PersonNameHasThreeOrFourParts", demo.PersonName, func(s string) bool {
			n := len(strings.Fields(s))
			return n == 3 || n == 4
		}},
		{"EmailIsASCIIWithOneAt", func(r *rand.Rand) string { return demo.Email(r, demo.PersonName(r)) }, func(s string) bool {
			for _, c := range s {
				if c > 127 || c == ' ' {
					return false
				}
			}
			return strings.Count(s, "@") == 1 && strings.Contains(s[strings.IndexByte(s, '@'):], ".")
		}},
		{"CompanyEmailIsASCII", func(r *rand.Rand) string { return demo.CompanyEmail(r, demo.CompanyName(r)) }, func(s string) bool {
			for _, c := range s {
				if c > 127 || c == ' ' {
					return false
				}
			}
			return strings.HasSuffix(s, ".pt") && strings.Count(s, "@") == 1
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			for range 2000 {
				if v := c.gen(r); !c.check(v) {
					t.Fatalf("generated %q fails the check", v)
				}
			}
		})
	}
}

func TestGeneratorsAreReproducibleForASeed(t *testing.T) {
	a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for range 100 {
		if x, y := demo.ValidNIF(a)+demo.ValidIBANPT(a)+demo.UUID(a), demo.ValidNIF(b)+demo.ValidIBANPT(b)+demo.UUID(b); x != y {
			t.Fatalf("same seed gave %q and %q", x, y)
		}
	}
}

func TestDateTextPTIsDayMonthYear(t *testing.T) {
	got := demo.DateTextPT(time.Date(2024, 2, 9, 15, 0, 0, 0, time.UTC))
	if got != "09/02/2024" {
		t.Fatalf("DateTextPT = %q, want 09/02/2024", got)
	}
}
