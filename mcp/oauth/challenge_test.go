package oauth_test

import (
	"errors"
	"reflect"
	"testing"

	"git.rickub.com/bots-garden/mini-me/mcp/oauth"
)

func TestParseChallenges(t *testing.T) {
	p := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		in   string
		want []oauth.Challenge
	}{
		{`Bearer error="invalid_token", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", scope="a b"`,
			[]oauth.Challenge{{Scheme: "Bearer", Params: p("error", "invalid_token", "resource_metadata", "https://h/.well-known/oauth-protected-resource/mcp", "scope", "a b")}}},
		{`Basic realm="x", Bearer scope="mcp:write", error=insufficient_scope`,
			[]oauth.Challenge{{Scheme: "Basic", Params: p("realm", "x")}, {Scheme: "Bearer", Params: p("scope", "mcp:write", "error", "insufficient_scope")}}},
		{`DPoP resource_metadata="u" , Bearer realm="r"`,
			[]oauth.Challenge{{Scheme: "DPoP", Params: p("resource_metadata", "u")}, {Scheme: "Bearer", Params: p("realm", "r")}}},
		{`Negotiate abc+/==, Bearer`,
			[]oauth.Challenge{{Scheme: "Negotiate", Token68: "abc+/=="}, {Scheme: "Bearer"}}},
		{`Bearer realm="a\"b\\c", Scope = "x" ,, error="e"`,
			[]oauth.Challenge{{Scheme: "Bearer", Params: p("realm", `a"b\c`, "scope", "x", "error", "e")}}},
		{`Bearer scope="first", scope="second"`,
			[]oauth.Challenge{{Scheme: "Bearer", Params: p("scope", "first")}}},
		{``, nil},
		{` , `, nil},
	}
	for _, tt := range tests {
		got, err := oauth.ParseChallenges(tt.in)
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.in, got, tt.want)
		}
	}
	if c, _ := oauth.ParseChallenges(`bearer Resource_Metadata="u"`); len(c) != 1 || c[0].Param("RESOURCE_METADATA") != "u" {
		t.Errorf("parameter names are not case-insensitive: %#v", c)
	}
}

func TestParseChallengesErrors(t *testing.T) {
	for _, in := range []string{`Bearer realm="unterminated`, `Bearer =x`, `Bearer realm="a" junk`, `"quoted"`, `Bearer realm="a\`} {
		got, err := oauth.ParseChallenges(in)
		if !errors.Is(err, oauth.ErrChallengeSyntax) {
			t.Errorf("%s: got %#v, %v; want ErrChallengeSyntax", in, got, err)
		}
	}
	// What came before the error is kept.
	got, err := oauth.ParseChallenges(`Bearer scope="a", Basic realm="b`)
	if err == nil || len(got) != 1 || got[0].Param("scope") != "a" {
		t.Errorf("got %#v, %v", got, err)
	}
}

// FuzzParseChallenges checks that any header parses without a panic, and
// that what parses prints back to a header that parses the same.
func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{
		`Bearer error="invalid_token", resource_metadata="https://h/x", scope="a b"`,
		`Basic realm="x", Bearer scope="w", error=insufficient_scope`,
		`Negotiate abc==, DPoP algs="ES256"`,
		`Bearer realm="a\"b\\c"`, `,,Bearer ,`, `Bearer realm="x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := oauth.ParseChallenges(in)
		if err != nil {
			return
		}
		var joined string
		for i, c := range got {
			if i > 0 {
				joined += ", "
			}
			joined += c.String()
		}
		again, err := oauth.ParseChallenges(joined)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("%q parsed to %#v, printed as %q, parsed again to %#v (%v)", in, got, joined, again, err)
		}
	})
}
