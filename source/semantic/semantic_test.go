package semantic_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigia-data/vigia/source/semantic"
)

// nifWithCheck appends the mod-11 check digit to eight digits, computed here independently
// of the package (weights 9..2, 11 - sum mod 11, 10 and 11 become 0).
func nifWithCheck(tb testing.TB, first8 string) string {
	tb.Helper()
	if len(first8) != 8 {
		tb.Fatalf("need 8 digits, got %d", len(first8))
	}
	sum := 0
	for i, w := 0, 9; i < 8; i, w = i+1, w-1 {
		sum += int(first8[i]-'0') * w
	}
	c := 11 - sum%11
	if c > 9 {
		c = 0
	}
	return fmt.Sprintf("%s%d", first8, c)
}

// wrongCheck returns nif with a different last digit.
func wrongCheck(nif string) string {
	last := nif[8] - '0'
	return fmt.Sprintf("%s%d", nif[:8], (last+1)%10)
}

func TestNIF(t *testing.T) {
	valid := []string{
		"123456789", // classic example
		"500000000", // remainder 1 gives check digit 0
		nifWithCheck(t, "24567812"),
		nifWithCheck(t, "50123456"),
		nifWithCheck(t, "98000001"),
		nifWithCheck(t, "45000012"),
	}
	for _, n := range valid {
		t.Run("valid_"+n, func(t *testing.T) {
			shape, ok := semantic.CheckNIF(n)
			if !shape || !ok {
				t.Fatalf("CheckNIF(%s) = %v, %v; want true, true", n, shape, ok)
			}
		})
	}
	invalidCheck := []string{"123456788", wrongCheck(nifWithCheck(t, "24567812")), wrongCheck("500000000")}
	for _, n := range invalidCheck {
		t.Run("badCheckDigit_"+n, func(t *testing.T) {
			shape, ok := semantic.CheckNIF(n)
			if !shape || ok {
				t.Fatalf("CheckNIF(%s) = %v, %v; want true, false", n, shape, ok)
			}
		})
	}
	notShape := []string{"", "12345678", "1234567890", "12345678a", "400000000", "930000000", "700000000" /* 70 ok */, "073456789"}
	for _, n := range notShape {
		t.Run("notShape_"+n, func(t *testing.T) {
			shape, _ := semantic.CheckNIF(n)
			if n == "700000000" { // 70 is an attributed prefix (heranças indivisas)
				if !shape {
					t.Fatalf("CheckNIF(%s) shape = false; want true", n)
				}
				return
			}
			if shape {
				t.Fatalf("CheckNIF(%q) shape = true; want false", n)
			}
		})
	}
}

func TestIBAN(t *testing.T) {
	cases := []struct {
		in           string
		shape, valid bool
	}{
		{"PT50000201231234567890154", true, true},
		{"PT50 0002 0123 1234 5678 9015 4", true, true},
		{"pt50000201231234567890154", true, true},
		{"GB82WEST12345698765432", true, true},
		{"DE89370400440532013000", true, true},
		{"PT50000201231234567890155", true, false},
		{"GB83WEST12345698765432", true, false},
		{"PT5000020123", false, false},
		{"1234567890123456", false, false},
		{"PT50-0002-0123-1234-5678-9015-4", false, false},
		{"", false, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			shape, valid := semantic.CheckIBAN(c.in)
			if shape != c.shape || valid != c.valid {
				t.Fatalf("IBANParts = %v, %v; want %v, %v", shape, valid, c.shape, c.valid)
			}
		})
	}
}

func TestPhonePT(t *testing.T) {
	cases := []struct {
		in, country  string
		match, valid bool
	}{
		{"912345678", "PT", true, true},
		{"912 345 678", "PT", true, true},
		{"213456789", "PT", true, true},
		{"+351912345678", "PT", true, true},
		{"+351 912 345 678", "ES", true, true},
		{"00351912345678", "ES", true, true},
		{"00351 212345678", "FR", true, true},
		{"912345678", "ES", false, false},    // bare digits belong to the data country
		{"912345678", "", false, false},      // country must be given explicitly to read bare digits
		{"512345678", "PT", false, false},    // not a PT phone range
		{"+34912345678", "PT", false, false}, // a Spanish number
		{"91234567", "PT", false, false},
		{"+351 812345678", "PT", false, false},
		{"912-345-678x", "PT", false, false},
	}
	for _, c := range cases {
		t.Run(c.country+"_"+c.in, func(t *testing.T) {
			m, v := semantic.CheckPhonePT(c.in, c.country)
			if m != c.match || v != c.valid {
				t.Fatalf("CheckPhonePT(%q, %q) = %v, %v; want %v, %v", c.in, c.country, m, v, c.match, c.valid)
			}
		})
	}
}

func TestIsPhone(t *testing.T) {
	cases := []struct {
		in, region string
		want       bool
	}{
		{"912345678", "ES", true}, // Madrid landline
		{"+34 912 345 678", "PT", true},
		{"612345678", "ES", true},
		{"123456789", "ES", false},
		{"2025550143", "US", true},
		{"12345", "PT", false},
		{"abc", "PT", false},
	}
	for _, c := range cases {
		t.Run(c.region+"_"+c.in, func(t *testing.T) {
			if got := semantic.IsPhone(c.in, c.region); got != c.want {
				t.Fatalf("IsPhone(%q, %q) = %v; want %v", c.in, c.region, got, c.want)
			}
		})
	}
}

func TestShapes(t *testing.T) {
	cases := []struct {
		name string
		fn   func(string) bool
		in   string
		want bool
	}{
		{"email", semantic.IsEmail, "ana.silva@exemplo.pt", true},
		{"email", semantic.IsEmail, "a+b@sub.example.com", true},
		{"email", semantic.IsEmail, "ana@exemplo", false},
		{"email", semantic.IsEmail, "ana silva@exemplo.pt", false},
		{"email", semantic.IsEmail, "@exemplo.pt", false},
		{"email", semantic.IsEmail, "a@@b.pt", false},
		{"uuid", semantic.IsUUID, "123e4567-e89b-12d3-a456-426614174000", true},
		{"uuid", semantic.IsUUID, "123E4567-E89B-12D3-A456-426614174000", true},
		{"uuid", semantic.IsUUID, "123e4567e89b12d3a456426614174000", false},
		{"uuid", semantic.IsUUID, "123e4567-e89b-12d3-a456-42661417400g", false},
		{"postal", semantic.IsPostalCodePT, "1000-001", true},
		{"postal", semantic.IsPostalCodePT, "1000001", false},
		{"postal", semantic.IsPostalCodePT, "28001", false},
	}
	for _, c := range cases {
		t.Run(c.name+"_"+c.in, func(t *testing.T) {
			if got := c.fn(c.in); got != c.want {
				t.Fatalf("%s(%q) = %v; want %v", c.name, c.in, got, c.want)
			}
		})
	}
}

func TestDateText(t *testing.T) {
	cases := []struct {
		in           string
		shape, valid bool
	}{
		{"2024-02-29", true, true},
		{"2023-02-29", true, false},
		{"2024-01-31T10:20:30Z", true, true},
		{"2024-01-31T10:20:30.123+01:00", true, true},
		{"2024-01-31 10:20:30", true, true},
		{"2024-01-31 25:20:30", true, false},
		{"31/01/2024", true, true},
		{"31/02/2024", true, false},
		{"2024/01/31", false, false},
		{"1/1/2024", false, false},
		{"2024-01-31 hello", false, false},
		{"20240131", false, false},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			shape, valid := semantic.CheckDateText(c.in)
			if shape != c.shape || valid != c.valid {
				t.Fatalf("DateText = %v, %v; want %v, %v", shape, valid, c.shape, c.valid)
			}
		})
	}
}

func TestMask(t *testing.T) {
	cases := []struct{ in, want string }{
		{"912 345 678", "999 999 999"},
		{"ana@ex.pt", "AAA@AA.AA"},
		{"João-Ção", "AAAA-AAA"},
		{"1000-001", "9999-999"},
		{"", ""},
		{strings.Repeat("x", 50), strings.Repeat("A", 40) + "…"},
		{strings.Repeat("ç", 40), strings.Repeat("A", 40)},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			if got := semantic.Mask(c.in); got != c.want {
				t.Fatalf("Mask(%q) = %q; want %q", c.in, got, c.want)
			}
		})
	}
}

func TestMaskCounterTopIsOrderedAndCapped(t *testing.T) {
	var m semantic.MaskCounter
	for i := 0; i < 30; i++ {
		for j := 0; j <= i; j++ {
			m.Add(strings.Repeat("a", i+1))
		}
	}
	m.AddBytes([]byte("12"))
	top := m.Top(semantic.MaxMasks)
	if len(top) != semantic.MaxMasks {
		t.Fatalf("len(top) = %d; want %d", len(top), semantic.MaxMasks)
	}
	if top[0].Count != 30 || top[0].Mask != strings.Repeat("A", 30) {
		t.Fatalf("top[0] = %+v", top[0])
	}
	for i := 1; i < len(top); i++ {
		if top[i].Count > top[i-1].Count {
			t.Fatalf("not sorted at %d: %+v", i, top)
		}
	}
}

func repeat(vals []string, n int) []string {
	out := make([]string, 0, n)
	for len(out) < n {
		out = append(out, vals[len(out)%len(vals)])
	}
	return out
}

func TestDetect(t *testing.T) {
	goodNIFs := []string{}
	for i := 0; i < 18; i++ {
		goodNIFs = append(goodNIFs, nifWithCheck(t, fmt.Sprintf("2%07d", 1234567+i*7919)))
	}
	nifs := append(append([]string{}, goodNIFs...), wrongCheck(goodNIFs[0]), wrongCheck(goodNIFs[1]))
	ptPhones := []string{"912345678", "+351 936 543 210", "961234567", "00351213456789", "223456789"}
	cases := []struct {
		name          string
		values        []string
		country       string
		wantType      string
		wantRegion    string
		wantValidLess bool
	}{
		{"ptPhonesPT", repeat(ptPhones, 100), "PT", semantic.TypePhonePT, "", false},
		{"ptPhonesInES", repeat([]string{"912345678", "931234567", "961234567"}, 100), "ES", semantic.TypePhone, "ES", false},
		{"plus351InES", repeat([]string{"+351912345678", "00351 936 543 210"}, 100), "ES", semantic.TypePhonePT, "", false},
		{"invalidESNumbersNoType", repeat([]string{"123456789", "012345678"}, 100), "ES", "", "", false},
		{"nifPT", repeat(nifs, 200), "PT", semantic.TypeNIFPT, "", true},
		{"nifNotOutsidePT", repeat(goodNIFs, 100), "ES", "", "", false},
		{"nineDigitIDsAreNotNIF", repeat([]string{"100000001", "100000002", "100000003", "100000004", "100000005", "100000006", "100000007", "100000008", "100000009", "100000010", "100000011"}, 110), "PT", "", "", false},
		{"email", append(repeat([]string{"a@b.pt", "c.d@e.com"}, 90), repeat([]string{"nope"}, 10)...), "PT", semantic.TypeEmail, "", false},
		{"emailBelowThreshold", append(repeat([]string{"a@b.pt"}, 70), repeat([]string{"nope"}, 30)...), "PT", "", "", false},
		{"iban", repeat([]string{"PT50000201231234567890154", "GB82WEST12345698765432", "GB83WEST12345698765432"}, 30), "PT", semantic.TypeIBAN, "", true},
		{"productCodesNotIBAN", repeat([]string{"AB12CDEFGHIJKLMN", "XY99ZZZZZZZZZZZZ1"}, 30), "PT", "", "", false},
		{"dateText", repeat([]string{"2024-01-31", "31/12/2023", "31/02/2023"}, 30), "PT", semantic.TypeDateAsText, "", true},
		{"postalPT", repeat([]string{"1000-001", "4000-123"}, 30), "PT", semantic.TypePostalCodePT, "", false},
		{"postalNotInES", repeat([]string{"1000-001", "4000-123"}, 30), "ES", "", "", false},
		{"uuid", repeat([]string{"123e4567-e89b-12d3-a456-426614174000", "00000000-0000-0000-0000-000000000000"}, 30), "PT", semantic.TypeUUID, "", false},
		{"freeText", repeat([]string{"olá mundo", "bom dia"}, 30), "PT", "", "", false},
		{"empty", nil, "PT", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := semantic.Detect(c.values, c.country)
			if c.wantType == "" {
				if got != nil {
					t.Fatalf("Detect = %+v; want no type", *got)
				}
				return
			}
			if got == nil {
				t.Fatalf("Detect = nil; want %s", c.wantType)
			}
			if got.Type != c.wantType || got.Region != c.wantRegion {
				t.Fatalf("Detect = %+v; want type %s region %q", *got, c.wantType, c.wantRegion)
			}
			if got.Total != len(c.values) || got.Matches > got.Total || got.Valid > got.Matches {
				t.Fatalf("inconsistent counts %+v for %d values", *got, len(c.values))
			}
			if c.wantValidLess != (got.Valid < got.Matches) {
				t.Fatalf("Valid %d, Matches %d; want Valid < Matches = %v", got.Valid, got.Matches, c.wantValidLess)
			}
		})
	}
}

// ptPhones returns n Portuguese-shaped numbers, invalid every tenth (a 4 after the 9: no
// such mobile range), and how many are valid by CheckPhonePT itself.
func ptPhones(tb testing.TB, n int) ([]string, int) {
	tb.Helper()
	out := make([]string, n)
	valid := 0
	for i := range out {
		prefix := []string{"91", "92", "93", "96", "21", "22"}[i%6]
		if i%10 == 9 {
			prefix = "94"
		}
		out[i] = fmt.Sprintf("%s%07d", prefix, (i*7919)%10000000)
		if _, ok := semantic.CheckPhonePT(out[i], "PT"); ok {
			valid++
		}
	}
	if valid == n || valid == 0 {
		tb.Fatalf("fixture has %d valid of %d", valid, n)
	}
	return out, valid
}

func TestPhoneValidityIsCheckedOnABoundedSubset(t *testing.T) {
	const n = 20000
	phones, valid := ptPhones(t, n)
	var sorted, invalid []string // every invalid number at the end of the stream
	for _, p := range phones {
		if _, ok := semantic.CheckPhonePT(p, "PT"); ok {
			sorted = append(sorted, p)
		} else {
			invalid = append(invalid, p)
		}
	}
	sorted = append(sorted, invalid...)
	for _, c := range []struct {
		name   string
		values []string
		expect bool
	}{
		{"Expected", phones, true},
		{"Unannounced", phones, false},
		{"InvalidLastExpected", sorted, true},
		{"InvalidLastUnannounced", sorted, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := semantic.NewDetector("PT")
			if c.expect {
				d.ExpectValues(len(c.values))
			}
			for _, v := range c.values {
				d.AddBytes([]byte(v))
			}
			r := d.Result()
			if r == nil || r.Type != semantic.TypePhonePT {
				t.Fatalf("Result = %+v; want phone_pt", r)
			}
			if r.Total != n || r.Matches != n {
				t.Errorf("Total %d Matches %d; want %d shape matches, counted exactly", r.Total, r.Matches, n)
			}
			if r.Checked > semantic.PhoneChecks || r.Checked < semantic.PhoneChecks/3 || !r.Estimated() {
				t.Errorf("Checked %d (estimated %v); want at most %d and not far fewer", r.Checked, r.Estimated(), semantic.PhoneChecks)
			}
			// The subset is a random one: its valid share is a binomial proportion with a
			// standard error below 1.5% here; 5 standard errors cannot fail by chance.
			share, want := float64(r.Valid)/float64(r.Matches), float64(valid)/n
			if math.Abs(share-want) > 0.075 {
				t.Errorf("valid share %.3f; want %.3f", share, want)
			}
		})
	}
}

func TestSmallColumnsAreCheckedWhole(t *testing.T) {
	phones, valid := ptPhones(t, semantic.PhoneChecks/2)
	r := semantic.Detect(phones, "PT")
	if r == nil || r.Type != semantic.TypePhonePT || r.Checked != r.Matches || r.Valid != valid || r.Estimated() {
		t.Fatalf("Detect = %+v; want every value checked, %d valid", r, valid)
	}
}

func TestGenericPhonesAreEstimatedOnASubset(t *testing.T) {
	// Bare nine-digit numbers read with Spain's plan: every value is parsed by the costly
	// check, so only a subset is, and Matches is scaled from it.
	vals := make([]string, 6000)
	for i := range vals {
		vals[i] = fmt.Sprintf("6%08d", (i*104729)%100000000) // Spanish mobiles
	}
	r := semantic.Detect(vals, "ES")
	if r == nil || r.Type != semantic.TypePhone || r.Region != "ES" {
		t.Fatalf("Detect = %+v; want phone ES", r)
	}
	if r.Checked > semantic.PhoneChecks || !r.Estimated() || r.Matches < len(vals)*9/10 || r.Valid != r.Matches {
		t.Fatalf("Detect = %+v", r)
	}
}

func BenchmarkDetectPhoneSample(b *testing.B) {
	phones, _ := ptPhones(b, 10000)
	for b.Loop() {
		semantic.Detect(phones, "PT")
	}
}
