package rule_test

import (
	"regexp"
	"testing"

	"github.com/vigia-data/vigia/rule"
	"github.com/vigia-data/vigia/source/semantic"
)

// The patterns of the shipped packs accept the values scans recognise as the item's
// semantic type (a pattern that refused them would fail every clean column) and refuse
// values of another shape.
func TestPackPatternsAcceptWhatScansRecognise(t *testing.T) {
	samples := map[string]struct{ good, bad []string }{
		"nif_pt":         {[]string{"123456789", "501442600", "999999990"}, []string{"12345678", "412345678", "ABC456789"}},
		"postal_code_pt": {[]string{"1000-001", "4470-123"}, []string{"1000001", "1000-01"}},
		"iban":           {[]string{"PT50000201231234567890154", "PT50 0002 0123 1234 5678 9015 4", "DE89370400440532013000"}, []string{"PT50", "1234567890123456"}},
		"phone_pt":       {[]string{"912345678", "+351 912 345 678", "00351212345678", "21 234 56 78"}, []string{"812345678", "+44 20 7946 0958"}},
		"email":          {[]string{"ana@example.pt", "a.b+c@sub.example.com"}, []string{"ana@", "ana example.pt", "@example.pt"}},
	}
	check := map[string]func(string) bool{
		"nif_pt":         func(s string) bool { shape, _ := semantic.CheckNIF(s); return shape },
		"postal_code_pt": semantic.IsPostalCodePT,
		"iban":           func(s string) bool { shape, _ := semantic.CheckIBAN(s); return shape },
		"phone_pt":       func(s string) bool { match, _ := semantic.CheckPhonePT(s, "PT"); return match },
		"email":          semantic.IsEmail,
	}
	for _, p := range rule.Packs() {
		for _, it := range p.Items {
			if it.RuleType != rule.TypePattern {
				continue
			}
			re := regexp.MustCompile(it.Pattern)
			s, ok := samples[it.SemanticType]
			if !ok {
				t.Fatalf("%s: no samples for %s", it.Key, it.SemanticType)
			}
			for _, v := range s.good {
				if !check[it.SemanticType](v) {
					t.Fatalf("%s: sample %q is not %s to the scans", it.Key, v, it.SemanticType)
				}
				if !re.MatchString(v) {
					t.Errorf("%s refuses %q", it.Key, v)
				}
			}
			for _, v := range s.bad {
				if re.MatchString(v) {
					t.Errorf("%s accepts %q", it.Key, v)
				}
			}
		}
	}
}
