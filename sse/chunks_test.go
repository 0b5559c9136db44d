package sse

import (
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// loadSample returns testdata/sample.sse, an MCP stream that uses every
// line ending, a BOM, comments, a priming event and ignored blocks, and
// the result its golden file says it decodes to.
func loadSample(t *testing.T) (string, decoded) {
	t.Helper()
	stream, err := os.ReadFile("testdata/sample.sse")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/sample.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		Events      []Event `json:"events"`
		LastEventID string  `json:"lastEventID"`
		RetryMS     int64   `json:"retryMS"`
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	return string(stream), decoded{
		events:   golden.Events,
		lastID:   golden.LastEventID,
		retry:    time.Duration(golden.RetryMS) * time.Millisecond,
		hasRetry: true,
	}
}

func TestSampleGolden(t *testing.T) {
	stream, want := loadSample(t)
	if diff := sameDecoded(referenceDecode(stream), want); diff != "" {
		t.Fatalf("reference decoder disagrees with the golden file:\n%s", diff)
	}
	got, err := decodeAll(t, strings.NewReader(stream), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameDecoded(got, want); diff != "" {
		t.Fatal(diff)
	}
}

func TestSampleAtEverySplitPoint(t *testing.T) {
	stream, want := loadSample(t)
	for i := 0; i <= len(stream); i++ {
		got, err := decodeAll(t, &chunkReader{s: stream, sizes: []int{i, len(stream)}}, nil)
		if err != nil {
			t.Fatalf("split at %d: %v", i, err)
		}
		if diff := sameDecoded(got, want); diff != "" {
			t.Fatalf("split at %d:\n%s", i, diff)
		}
	}
}

func TestSampleInChunksOfEverySize(t *testing.T) {
	stream, want := loadSample(t)
	for n := 1; n <= len(stream); n++ {
		got, err := decodeAll(t, &chunkReader{s: stream, sizes: []int{n}}, nil)
		if err != nil {
			t.Fatalf("chunks of %d: %v", n, err)
		}
		if diff := sameDecoded(got, want); diff != "" {
			t.Fatalf("chunks of %d:\n%s", n, diff)
		}
	}
}

func TestSampleThroughIOTestReaders(t *testing.T) {
	stream, want := loadSample(t)
	readers := map[string]io.Reader{
		"OneByteReader": iotest.OneByteReader(strings.NewReader(stream)),
		"HalfReader":    iotest.HalfReader(strings.NewReader(stream)),
		"DataErrReader": iotest.DataErrReader(strings.NewReader(stream)),
	}
	for name, r := range readers {
		got, err := decodeAll(t, r, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := sameDecoded(got, want); diff != "" {
			t.Errorf("%s:\n%s", name, diff)
		}
	}
}

// A large event that arrives in many small reads is delivered whole.
func TestLargeEventInSmallReads(t *testing.T) {
	line := strings.Repeat("x", 1<<20)
	stream := "id: big\ndata: " + line + "\ndata: " + line + "\n\ndata: next\n\n"
	got, err := decodeAll(t, &chunkReader{s: stream, sizes: []int{1000, 1, 4093}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := decoded{events: []Event{{Data: line + "\n" + line, ID: "big"}, {Data: "next", ID: "big"}}, lastID: "big"}
	if diff := sameDecoded(got, want); diff != "" {
		t.Fatalf("large event differs (lengths %d, %d)", len(got.events), len(want.events))
	}
}
