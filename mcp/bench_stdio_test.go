//go:build unix

package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"git.rickub.com/bots-garden/mini-me/internal/mcptest"
	"git.rickub.com/bots-garden/mini-me/mcp"
)

// BenchmarkCallToolStdio measures a tools/call round trip to a stdio
// server (internal/mcptest/finance, -quiet), next to two floors that talk
// to a process of their own: a bare pipe, whose caller writes the request
// line and reads the answer line itself, and the same pipe read by a
// goroutine of its own that hands each line to the caller on a channel,
// as any client that reads notifications and server requests at any time
// must. The three alternate in batches within one run, so that a busy
// machine slows them alike. x-pipe and x-handoff are the client's time
// over each floor's; cpu-x-pipe and cpu-x-handoff the same for this
// process's CPU time (the servers run in child processes, so it is the
// client's alone); the allocations are the client's.
func BenchmarkCallToolStdio(b *testing.B) {
	bin := mcptest.BuildFinance(b)
	c, err := mcp.Connect(context.Background(), &mcp.CommandTransport{Command: bin, Args: []string{"-quiet"}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	args := map[string]any{"text": "hello"}
	client := func() {
		res, err := c.CallTool(context.Background(), "echo", args)
		if err != nil || res.Text() != "hello" {
			b.Fatal(err, res)
		}
	}
	pipe := barePipe(b, bin, false)
	defer pipe.close()
	handoff := barePipe(b, bin, true)
	defer handoff.close()
	for range 20 { // warm up
		client()
		pipe.call()
		handoff.call()
	}
	b.ReportAllocs()
	b.ResetTimer()
	var tc, tp, th time.Duration // wall time
	var cc, cp, ch time.Duration // CPU time
	timed := func(f func(), n int, wall, cpu *time.Duration) {
		t0, c0 := time.Now(), cpuTime(b)
		for range n {
			f()
		}
		*wall += time.Since(t0)
		*cpu += cpuTime(b) - c0
	}
	const batch = 50
	for done := 0; done < b.N; done += batch {
		n := min(batch, b.N-done)
		timed(client, n, &tc, &cc)
		b.StopTimer()
		timed(pipe.call, n, &tp, &cp)
		timed(handoff.call, n, &th, &ch)
		b.StartTimer()
	}
	b.ReportMetric(float64(tc)/float64(tp), "x-pipe")
	b.ReportMetric(float64(tc)/float64(th), "x-handoff")
	b.ReportMetric(float64(cc)/float64(cp), "cpu-x-pipe")
	b.ReportMetric(float64(cc)/float64(ch), "cpu-x-handoff")
	b.ReportMetric(float64(cc)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pipeFloor is a floor of BenchmarkCallToolStdio: the request built by
// appending bytes into a reused buffer, the answer line read into a
// reused buffer and searched, not decoded.
type pipeFloor struct {
	b     *testing.B
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	lines chan []byte // with handoff: the reader's lines
	free  chan []byte // ... and the buffers it reads them into
	id    int64
	req   []byte
}

func barePipe(b *testing.B, bin string, handoff bool) *pipeFloor {
	p := &pipeFloor{b: b, cmd: exec.Command(bin, "-quiet")}
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		b.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	p.out = bufio.NewReaderSize(out, 64<<10)
	if handoff {
		p.lines, p.free = make(chan []byte, 1), make(chan []byte, 2)
		p.free <- nil
		p.free <- nil
		go func() {
			defer close(p.lines)
			for {
				buf := <-p.free // never waits: the caller gives its line back before the next call
				line, err := p.out.ReadSlice('\n')
				if err != nil {
					return
				}
				p.lines <- append(buf[:0], line...)
			}
		}()
	}
	return p
}

var pipeFloorMeta = []byte(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"floor","version":"1.0.0"}}`)

func (p *pipeFloor) call() {
	p.id++
	b := append(p.req[:0], `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, p.id, 10)
	b = append(b, `,"method":"tools/call","params":{`...)
	b = append(b, pipeFloorMeta...)
	b = append(b, `,"name":"echo","arguments":{"text":"hello"}}}`+"\n"...)
	p.req = b
	if _, err := p.in.Write(b); err != nil {
		p.b.Fatal(err)
	}
	var line []byte
	if p.lines == nil {
		var err error
		if line, err = p.out.ReadSlice('\n'); err != nil {
			p.b.Fatal(err)
		}
	} else {
		line = <-p.lines
		defer func() { p.free <- line }()
	}
	if !bytes.Contains(line, []byte(`"text":"hello"`)) {
		p.b.Fatalf("unexpected answer %q", line)
	}
}

func (p *pipeFloor) close() {
	_ = p.in.Close() // the server exits, the reader sees EOF
	if p.lines != nil {
		for range p.lines { // until the reader returns
		}
	}
	_ = p.cmd.Wait()
}
