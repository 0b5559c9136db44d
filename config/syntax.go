package config

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yaml.v3 reports malformed YAML as "yaml: line N: what" or "yaml: what".
// Scanner errors (a bad character, an unterminated string, a key without
// ':') give the right line. Parser errors (a key at the wrong indentation,
// an unclosed bracket) give the line before the start of the enclosing
// block, often far from the mistake; these, and errors without a line, are
// located by parseStop instead.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
}

// syntax reports err, yaml.v3's error on data, with the best line known.
func (d *decoder) syntax(data []byte, err error) {
	line, msg := splitYAMLError(err)
	if line == 0 || slices.Contains(parserProblems, msg) {
		line = parseStop(data, msg)
	}
	d.problems = append(d.problems, Problem{File: d.file, Line: line, Message: "malformed YAML: " + msg})
}

func splitYAMLError(err error) (line int, msg string) {
	msg = strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, what, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				return n, what
			}
		}
	}
	return 0, msg
}

// parseStop returns the line where parsing data stops with the message msg.
// It parses data again, ending one byte per read, to learn how far the
// parser got.
// The scanner reads one token ahead, so when the data up to the previous
// line holding more than blanks and comments already fails with msg, the
// mistake is on that line.
func parseStop(data []byte, msg string) int {
	starts := lineStarts(data)
	// Reading one byte at a time is slow, so only the end is read that way:
	// a first pass in large reads bounds where the parser stopped, as it
	// reads at most lookahead bytes past the point it needs.
	coarse := readUntilError(data, len(data))
	last := max(readUntilError(data, coarse-lookahead)-1, 0) // offset of the last byte needed
	line := sort.SearchInts(starts, last+1)
	for prev := line - 1; prev >= 1; prev-- {
		content := bytes.TrimSpace(data[starts[prev-1]:starts[prev]])
		if len(content) == 0 || content[0] == '#' {
			continue
		}
		if failsWith(data[:starts[prev]], msg) {
			return prev
		}
		break
	}
	return line
}

// lineStarts returns the offset where each line of data starts, counting
// line breaks as yaml.v3 does: CR LF, CR, LF, NEL, LS and PS.
func lineStarts(data []byte) []int {
	starts := []int{0}
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
			i++
		case data[i] == '\r' || data[i] == '\n':
		case bytes.HasPrefix(data[i:], []byte("\u0085")):
			i++
		case bytes.HasPrefix(data[i:], []byte("\u2028")) || bytes.HasPrefix(data[i:], []byte("\u2029")):
			i += 2
		default:
			continue
		}
		starts = append(starts, i+1)
	}
	return starts
}

// lookahead bounds how far past the bytes it needs yaml.v3 reads: one fill
// of its 512-byte raw buffer, with a wide margin.
const lookahead = 4096

// readUntilError decodes every document of data and returns how many bytes
// the parser had read when it stopped. Past offset slowFrom, it reads one
// byte at a time, so that the count is exact there.
func readUntilError(data []byte, slowFrom int) int {
	r := &stingyReader{data: data, slowFrom: slowFrom}
	dec := yaml.NewDecoder(r)
	var n yaml.Node
	for dec.Decode(&n) == nil {
	}
	return r.pos
}

// failsWith reports whether decoding data fails with the message msg.
func failsWith(data []byte, msg string) bool {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return false
		}
		_, m := splitYAMLError(err)
		return m == msg
	}
}

// stingyReader hands out data in large reads up to offset slowFrom and one
// byte per read after it, so that pos tells how far the YAML parser got.
type stingyReader struct {
	data     []byte
	pos      int
	slowFrom int
}

func (r *stingyReader) Read(p []byte) (int, error) {
	if r.pos >= len(r.data) {
		return 0, io.EOF
	}
	end := r.pos + 1
	if r.pos < r.slowFrom {
		end = r.slowFrom
	}
	n := copy(p, r.data[r.pos:min(end, len(r.data))])
	r.pos += n
	return n, nil
}
