package config_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"git.rickub.com/bots-garden/mini-me/config"
)

// BenchmarkParse measures Parse against its baseline in the same run:
// yaml.v3 parsing the same bytes into a yaml.Node, which Parse does first.
func BenchmarkParse(b *testing.B) {
	full, err := os.ReadFile("testdata/full.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var big strings.Builder
	big.WriteString(server1)
	for i := 0; big.Len() < 500_000; i++ {
		fmt.Fprintf(&big, "    - name: s%d\n      url: https://h%d.example/mcp\n      tools: [a, b, c]\n", i, i)
	}
	inputs := []struct {
		name string
		data []byte
	}{
		{"full", full},
		{"500KB", []byte(big.String())},
		{"500KB-malformed-end", []byte(big.String() + "     dir: /\n")},
	}
	for _, in := range inputs {
		b.Run(in.name+"/yaml-node-baseline", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for i := 0; i < b.N; i++ {
				var n yaml.Node
				_ = yaml.Unmarshal(in.data, &n)
			}
		})
		b.Run(in.name+"/config", func(b *testing.B) {
			b.SetBytes(int64(len(in.data)))
			for i := 0; i < b.N; i++ {
				_, _ = config.Parse(in.data)
			}
		})
	}
}
