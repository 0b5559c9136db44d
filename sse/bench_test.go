package sse

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"strings"
	"testing"
	"time"

	gosse "github.com/tmaxmax/go-sse"
)

// mcpStream returns n events like an MCP server's: an id and one JSON-RPC
// notification of about size bytes of data.
func mcpStream(n, size int) []byte {
	var b bytes.Buffer
	for i := range n {
		prefix := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","seq":%d,"data":"`, i)
		fmt.Fprintf(&b, "id: %d\ndata: %s%s\"}}\n\n", i, prefix, strings.Repeat("x", max(0, size-len(prefix)-3)))
	}
	return b.Bytes()
}

// BenchmarkDecode compares the Decoder with go-sse's bare Read on the same
// input, so that the cost of this package's layer shows as a ratio:
//
//	go test -run '^$' -bench Decode -count 10 ./sse | benchstat -col /impl -
//
// "whole" reads the stream from memory in reads as large as the decoder
// asks for; "mss" delivers it in 1460-byte reads, as a network does.
// "decoder" is Events, "raw" RawEvents.
func BenchmarkDecode(b *testing.B) {
	inputs := []struct {
		name      string
		n, size   int
		chunkSize int
	}{
		{"events=200B/reads=whole", 5000, 200, 0},
		{"events=8KB/reads=whole", 2000, 8 << 10, 0},
		{"events=200B/reads=mss", 5000, 200, 1460},
		{"events=8KB/reads=mss", 2000, 8 << 10, 1460},
		{"events=1MiB/reads=mss", 4, 1 << 20, 1460},
	}
	impls := []struct {
		name   string
		decode func(io.Reader) (events, bytes int, err error)
	}{
		{"go-sse", decodeGoSSE},
		{"decoder", decodeDecoder},
		{"raw", decodeRaw},
	}
	for _, in := range inputs {
		stream := mcpStream(in.n, in.size)
		text := string(stream)
		for _, impl := range impls {
			b.Run(in.name+"/impl="+impl.name, func(b *testing.B) {
				b.SetBytes(int64(len(stream)))
				b.ReportAllocs()
				for range b.N {
					var r io.Reader = bytes.NewReader(stream)
					if in.chunkSize > 0 {
						r = &chunkReader{s: text, sizes: []int{in.chunkSize}}
					}
					n, _, err := impl.decode(r)
					if err != nil || n != in.n {
						b.Fatalf("decoded %d events, error %v; want %d", n, err, in.n)
					}
				}
			})
		}
	}
}

func decodeGoSSE(r io.Reader) (events, size int, err error) {
	for ev, err := range gosse.Read(r, &gosse.ReadConfig{MaxEventSize: DefaultMaxEventSize}) {
		if err != nil {
			return events, size, err
		}
		events++
		size += len(ev.Data)
	}
	return events, size, nil
}

func decodeDecoder(r io.Reader) (events, size int, err error) {
	return count(NewDecoder(r, nil).Events(context.Background()), func(ev Event) int { return len(ev.Data) })
}

// BenchmarkDecodePaired decodes the same stream with go-sse's bare Read
// and with the Decoder in alternation, and reports the Decoder's time as a
// ratio to go-sse's (x-go-sse), so that a noisy machine slows both alike:
//
//	go test -run '^$' -bench DecodePaired -count 10 ./sse
func BenchmarkDecodePaired(b *testing.B) {
	for _, size := range []int{200, 8 << 10} {
		stream := mcpStream(20000/max(1, size/200), size)
		b.Run(fmt.Sprintf("events=%dB", size), func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			var tg, td time.Duration
			for range b.N {
				for i, decode := range []func(io.Reader) (int, int, error){decodeGoSSE, decodeDecoder} {
					t0 := time.Now()
					if _, _, err := decode(bytes.NewReader(stream)); err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						tg += time.Since(t0)
					} else {
						td += time.Since(t0)
					}
				}
			}
			b.ReportMetric(float64(td)/float64(tg), "x-go-sse")
		})
	}
}

func decodeRaw(r io.Reader) (events, size int, err error) {
	return count(NewDecoder(r, nil).RawEvents(context.Background()), func(ev RawEvent) int { return len(ev.Data) })
}

// count counts the events of seq and the bytes of their data, until an
// error.
func count[E any](seq iter.Seq2[E, error], dataLen func(E) int) (events, size int, err error) {
	for ev, err := range seq {
		if err != nil {
			return events, size, err
		}
		events++
		size += dataLen(ev)
	}
	return events, size, nil
}
