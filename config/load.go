package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"go.yaml.in/yaml/v3"
)

// Load reads and validates the configuration file at path.
//
// It returns an [*Error] listing every problem when the file is not a valid
// configuration, and a wrapped I/O error (for example one matching
// [io/fs.ErrNotExist]) when the file cannot be read. Load never reads
// environment variables.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := readLimited(f)
	if err != nil {
		// The *fs.PathError already names the file.
		return nil, fmt.Errorf("config: %w", err)
	}
	return parse(data, path)
}

// Parse validates a configuration held in memory. Problems name the file
// "<input>"; use [Decode] to give it another name. The rules below hold for
// [Load] and [Decode] too.
//
// # Strictness and limits
//
// Unknown keys, duplicate keys, values of the wrong type, empty strings
// (except args items and env values) and unknown values are errors. Numbers
// and booleans where a string is expected are taken as written, so
// args: [--port, 8080] passes "8080". Booleans are true or false only.
//
// A file holds one YAML document of at most [MaxFileSize] bytes. YAML
// aliases (*name) and merge keys (<<) are refused, so the configuration
// is exactly what the file shows and a small file cannot expand into a huge
// one.
//
// Messages repeat names, keys and enumerated values, shortened to 40
// characters, but never a URL, an argument, an env or header value, or the
// value of tokenEnv or clientSecretEnv, any of which may hold a secret.
func Parse(data []byte) (*Config, error) {
	return parse(data, "<input>")
}

// Decode reads and validates a configuration from r, naming it name in
// [Config.File] and in problems. It reads at most [MaxFileSize]+1 bytes.
func Decode(r io.Reader, name string) (*Config, error) {
	data, err := readLimited(r)
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", name, err)
	}
	return parse(data, name)
}

// readLimited reads r up to one byte past MaxFileSize, enough for parse to
// tell that the file is too large.
func readLimited(r io.Reader) ([]byte, error) {
	return io.ReadAll(io.LimitReader(r, MaxFileSize+1))
}

func parse(data []byte, name string) (*Config, error) {
	d := &decoder{file: name}
	var cfg *Config
	if len(data) > MaxFileSize {
		d.problems = append(d.problems, Problem{File: name,
			Message: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)})
	} else if root, ok := d.document(data); ok {
		cfg = d.config(root)
	}
	if len(d.problems) > 0 {
		sort.SliceStable(d.problems, func(i, j int) bool {
			a, b := d.problems[i], d.problems[j]
			return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
		})
		return nil, &Error{File: name, Problems: d.problems}
	}
	return cfg, nil
}

// document parses data as a single YAML document and returns its root node,
// nil for an empty file. It reports malformed YAML and extra documents.
func (d *decoder) document(data []byte) (*yaml.Node, bool) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		d.syntax(data, err)
		return nil, false
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		d.report(&extra, "", "more than one YAML document; want exactly one")
	case !errors.Is(err, io.EOF):
		d.syntax(data, err)
	}
	if len(doc.Content) == 0 {
		return nil, true
	}
	return doc.Content[0], true
}
