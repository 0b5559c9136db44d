package chunks

import (
	"slices"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplit(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want []string
	}{
		{"", 4, nil},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"aé€b", 2, []string{"aé", "€", "b"}},
		{"é€", 1, []string{"é", "€"}},
		{"ab", 0, []string{"a", "b"}},
	} {
		if got := Split(tt.s, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
