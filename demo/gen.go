package demo

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// The generators below are exported so that tests of other packages (semantic detection,
// validation rules, synthetic data) can reuse values whose validity is known.

// ValidNIF returns a Portuguese personal NIF (first digit 1, 2 or 3) whose ninth digit is the
// mod-11 check digit of the first eight.
func ValidNIF(r *rand.Rand) string {
	return withNIFCheck(personNIFLead(r) + digits(r, 7))
}

// ValidNIPC returns a Portuguese company tax number (NIPC, first digit 5) with a correct
// mod-11 check digit.
func ValidNIPC(r *rand.Rand) string {
	return withNIFCheck("5" + digits(r, 7))
}

// InvalidNIF returns a nine-digit number shaped like a personal NIF (an attributed first
// digit) whose check digit is wrong: the typing error a validation rule must catch.
func InvalidNIF(r *rand.Rand) string {
	valid := withNIFCheck(personNIFLead(r) + digits(r, 7))
	wrong := (int(valid[8]-'0') + 1 + r.IntN(9)) % 10
	return valid[:8] + strconv.Itoa(wrong)
}

func personNIFLead(r *rand.Rand) string {
	// Most NIFs of people in use start with 2; 1 is older, 3 newer.
	switch n := r.IntN(10); {
	case n < 3:
		return "1"
	case n < 9:
		return "2"
	default:
		return "3"
	}
}

// withNIFCheck appends the mod-11 check digit to eight digits.
func withNIFCheck(first8 string) string {
	return first8 + strconv.Itoa(nifCheckDigit(first8))
}

func nifCheckDigit(first8 string) int {
	sum := 0
	for i := 0; i < 8; i++ {
		sum += int(first8[i]-'0') * (9 - i)
	}
	check := 11 - sum%11
	if check >= 10 {
		check = 0
	}
	return check
}

// ValidIBANPT returns a Portuguese IBAN without spaces: PT50, then a NIB of 21 digits (bank,
// branch, account, two NIB check digits). A NIB with correct check digits always gives the
// IBAN check digits 50, so the whole string passes the ISO 13616 mod-97 test.
func ValidIBANPT(r *rand.Rand) string {
	nib19 := bankCodes[r.IntN(len(bankCodes))] + digits(r, 4) + digits(r, 11)
	rem := mod97(nib19 + "00")
	return fmt.Sprintf("PT50%s%02d", nib19, 98-rem)
}

// InvalidIBANPT returns a string shaped like a Portuguese IBAN whose last digit was mistyped,
// so the mod-97 test fails (it catches every single-digit error).
func InvalidIBANPT(r *rand.Rand) string {
	valid := ValidIBANPT(r)
	last := int(valid[len(valid)-1] - '0')
	wrong := (last + 1 + r.IntN(9)) % 10
	return valid[:len(valid)-1] + strconv.Itoa(wrong)
}

// GroupIBAN writes an IBAN in groups of four characters, as printed on bank documents.
func GroupIBAN(iban string) string {
	var b strings.Builder
	for i := 0; i < len(iban); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(iban[i:min(i+4, len(iban))])
	}
	return b.String()
}

// mod97 returns a string of digits modulo 97.
func mod97(s string) int {
	rem := 0
	for i := 0; i < len(s); i++ {
		rem = (rem*10 + int(s[i]-'0')) % 97
	}
	return rem
}

// PTMobile returns a Portuguese mobile number of nine digits, starting 91, 92, 93 or 96.
func PTMobile(r *rand.Rand) string {
	return "9" + string("1236"[r.IntN(4)]) + digits(r, 7)
}

// PTLandline returns a Portuguese fixed-line number of nine digits in Lisbon (21) or
// Porto (22).
func PTLandline(r *rand.Rand) string {
	return "2" + string("12"[r.IntN(2)]) + digits(r, 7)
}

// PTLandlineIn returns a Portuguese fixed-line number with the area code of a city (one of
// CityNames); for any other city it returns PTLandline.
func PTLandlineIn(r *rand.Rand, cityName string) string {
	for _, c := range cities {
		if c.name == cityName {
			return c.area + digits(r, 9-len(c.area))
		}
	}
	return PTLandline(r)
}

// CityNames returns the cities whose postal codes and area codes the generators use.
func CityNames() []string {
	out := make([]string, len(cities))
	for i, c := range cities {
		out[i] = c.name
	}
	return out
}

// DialVariant writes a nine-digit Portuguese number the ways people type it: mostly bare,
// sometimes in groups of three, sometimes with +351 in front.
func DialVariant(r *rand.Rand, national string) string {
	switch n := r.IntN(20); {
	case n < 13:
		return national
	case n < 16:
		return national[:3] + " " + national[3:6] + " " + national[6:]
	default:
		return "+351 " + national
	}
}

// PostalCodePT returns a Portuguese postal code (dddd-ddd) of a real city.
func PostalCodePT(r *rand.Rand) string {
	_, code := pickCity(r)
	return code
}

// InvalidPostalCodePT returns a malformed Portuguese postal code: a digit missing, the dash
// missing, or a space instead of the dash.
func InvalidPostalCodePT(r *rand.Rand) string {
	_, code := pickCity(r)
	switch r.IntN(4) {
	case 0:
		return code[:7]
	case 1:
		return code[:4] + code[5:]
	case 2:
		return code[:4] + " " + code[5:]
	default:
		return code[1:]
	}
}

// pickCity returns a random city and a postal code inside it.
func pickCity(r *rand.Rand) (city, string) {
	c := cities[r.IntN(len(cities))]
	return c, fmt.Sprintf("%04d-%03d", c.prefix+r.IntN(c.span), r.IntN(1000))
}

// PersonName returns a full name built from common Portuguese first names and surnames:
// one or two first names and two surnames.
func PersonName(r *rand.Rand) string {
	first := firstNamesM
	if r.IntN(2) == 0 {
		first = firstNamesF
	}
	parts := []string{pick(r, first)}
	if r.IntN(10) < 3 {
		parts = append(parts, pick(r, first))
	}
	s1 := pick(r, surnames)
	s2 := pick(r, surnames)
	for s2 == s1 {
		s2 = pick(r, surnames)
	}
	parts = append(parts, s1, s2)
	return strings.Join(parts, " ")
}

// CompanyName returns a plausible Portuguese company name (Lda. or S.A.).
func CompanyName(r *rand.Rand) string {
	switch r.IntN(3) {
	case 0:
		return pick(r, surnames) + " & " + pick(r, surnames) + ", Lda."
	case 1:
		return pick(r, companySectors) + " " + pick(r, surnames) + ", Lda."
	default:
		return pick(r, companySectors) + " " + pick(r, companyWords) + ", S.A."
	}
}

// Email returns an e-mail address derived from a name, without accents.
func Email(r *rand.Rand, name string) string {
	parts := strings.Fields(strings.ToLower(foldAccents(name)))
	first, last := parts[0], parts[len(parts)-1]
	var local string
	switch r.IntN(4) {
	case 0:
		local = first + "." + last
	case 1:
		local = first + last + strconv.Itoa(r.IntN(100))
	case 2:
		local = first[:1] + "." + last
	default:
		local = first + "_" + last + strconv.Itoa(1960+r.IntN(45))
	}
	return local + "@" + pick(r, emailDomains)
}

// CompanyEmail returns a generic mailbox of a company, on a .pt domain derived from its name.
func CompanyEmail(r *rand.Rand, company string) string {
	var b strings.Builder
	for _, w := range strings.Fields(strings.ToLower(foldAccents(company))) {
		if w == "lda." || w == "s.a." || w == "&" {
			continue
		}
		b.WriteString(strings.Trim(w, ".,"))
	}
	return pick(r, []string{"geral", "info", "contabilidade", "encomendas"}) + "@" + b.String() + ".pt"
}

// Street returns a street address with a door number, sometimes with a floor.
func Street(r *rand.Rand) string {
	s := pick(r, streetKinds) + " " + pick(r, streetNames) + ", " + strconv.Itoa(1+r.IntN(250))
	if r.IntN(3) == 0 {
		s += ", " + strconv.Itoa(1+r.IntN(8)) + ".º " + pick(r, []string{"Esq.", "Dto.", "Frente"})
	}
	return s
}

// UUID returns a version-4 UUID in canonical form drawn from r, so it is reproducible.
func UUID(r *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := r.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 0, 36)
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[c>>4], hex[c&0x0f])
	}
	return string(out)
}

// DateTextPT writes a date the way Portuguese forms do: dd/mm/aaaa.
func DateTextPT(t time.Time) string {
	return t.Format("02/01/2006")
}

// digits returns n random decimal digits.
func digits(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

func pick(r *rand.Rand, list []string) string {
	return list[r.IntN(len(list))]
}

var accentFold = strings.NewReplacer(
	"á", "a", "à", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o",
	"õ", "o", "ú", "u", "ü", "u", "ç", "c", "Á", "A", "É", "E", "Í", "I", "Ó", "O", "Ú", "U",
	"Ç", "C", "º", "",
)

func foldAccents(s string) string { return accentFold.Replace(s) }
