package origin_test

import (
	"net/url"
	"testing"

	"go.uber.org/goleak"

	"git.rickub.com/bots-garden/mini-me/internal/origin"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSame(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://as.example/token", "https://AS.example:443/other?x", true},
		{"http://127.0.0.1/a", "http://127.0.0.1:80/b", true},
		{"https://as.example", "http://as.example", false},
		{"https://as.example", "https://as.example:8443", false},
		{"http://127.0.0.1:1234", "http://127.0.0.1:1235", false},
		{"https://as.example", "https://evil.example", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := origin.Same(a, b); got != tc.same {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}

func TestOf(t *testing.T) {
	u, _ := url.Parse("HTTPS://AS.Example:8443/token?x=1")
	if got := origin.Of(u); got != "https://as.example:8443" {
		t.Errorf("Of = %q", got)
	}
}
