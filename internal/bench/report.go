package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// results gathers every round's figures, by scenario and contender.
type results struct {
	rounds map[string]map[string][]figures
	errs   map[string]error
}

func newResults() *results {
	return &results{rounds: map[string]map[string][]figures{}, errs: map[string]error{}}
}

func (r *results) add(sc, c string, f figures) {
	if r.rounds[sc] == nil {
		r.rounds[sc] = map[string][]figures{}
	}
	r.rounds[sc][c] = append(r.rounds[sc][c], f)
}

func (r *results) fail(sc, c string, err error) { r.errs[sc+"\x00"+c] = err }
func (r *results) failed(sc, c string) bool     { return r.errs[sc+"\x00"+c] != nil }

// ratio returns the median and spread of the per-round ratios a/b of a
// figure; ok is false when either side lacks it.
func (r *results) ratio(sc, a, b, fig string) (med, lo, hi float64, ok bool) {
	ra, rb := r.rounds[sc][a], r.rounds[sc][b]
	var xs []float64
	for i := range min(len(ra), len(rb)) {
		va, oka := ra[i][fig]
		vb, okb := rb[i][fig]
		if oka && okb && vb != 0 {
			xs = append(xs, va/vb)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0, false
	}
	return median(xs), slices.Min(xs), slices.Max(xs), true
}

// raw returns the median over rounds of a figure, and its spread.
func (r *results) raw(sc, c, fig string) (med, lo, hi float64, ok bool) {
	var xs []float64
	for _, f := range r.rounds[sc][c] {
		if v, ok := f[fig]; ok {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0, 0, 0, false
	}
	lo, hi = slices.Min(xs), slices.Max(xs)
	if fig == "goroutines after Close" {
		return hi, lo, hi, true // a leak in any round counts
	}
	return median(xs), lo, hi, true
}

func (r *results) print(w io.Writer, scs []scenario, cs []contender, cfg config) {
	fmt.Fprintf(w, "mini-me client benchmark: %d rounds, %d calls per phase; ratios are medians of per-round ratios (min–max)\n", cfg.rounds, cfg.n)
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.name
	}
	type pair struct{ a, b string }
	var pairs []pair
	for _, p := range []pair{{"mini-me", "floor"}, {"mini-me", "go-sdk"}, {"go-sdk", "floor"}, {"mcp-go", "floor"}} {
		if slices.Contains(names, p.a) && slices.Contains(names, p.b) {
			pairs = append(pairs, p)
		}
	}
	for _, sc := range scs {
		fmt.Fprintf(w, "\n## %s\n", sc.name)
		for _, c := range names {
			if err := r.errs[sc.name+"\x00"+c]; err != nil {
				fmt.Fprintf(w, "%s failed: %v\n", c, err)
			}
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := []string{"figure"}
		head = append(head, names...)
		for _, p := range pairs {
			head = append(head, p.a+"/"+p.b)
		}
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		for _, fig := range figureNames {
			row := []string{fig}
			any := false
			for _, c := range names {
				v, lo, hi, ok := r.raw(sc.name, c, fig)
				cell := format(fig, v, ok)
				if ok && strings.HasSuffix(fig, "/ payload") {
					// a target of its own, not a ratio between contenders
					cell = fmt.Sprintf("%s (%s–%s)", cell, format(fig, lo, ok), format(fig, hi, ok))
				}
				row = append(row, cell)
				any = any || ok
			}
			if !any {
				continue
			}
			for _, p := range pairs {
				med, lo, hi, ok := r.ratio(sc.name, p.a, p.b, fig)
				if !ok || fig == "goroutines after Close" {
					row = append(row, "")
					continue
				}
				row = append(row, fmt.Sprintf("%.2f (%.2f–%.2f)", med, lo, hi))
			}
			fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
		}
		tw.Flush()
	}
}

func format(fig string, v float64, ok bool) string {
	switch {
	case !ok:
		return "-"
	case strings.HasSuffix(fig, "/ payload"):
		return fmt.Sprintf("%.2fx", v)
	case strings.HasPrefix(fig, "calls/s"):
		return fmt.Sprintf("%.0f", v)
	case strings.HasPrefix(fig, "allocs") || strings.HasPrefix(fig, "goroutines"):
		return fmt.Sprintf("%.0f", v)
	case strings.Contains(fig, "bytes"):
		return bytesString(v)
	}
	return time.Duration(math.Round(v)).Round(durRound(v)).String()
}

func durRound(v float64) time.Duration {
	switch {
	case v >= float64(time.Millisecond):
		return 10 * time.Microsecond
	case v >= float64(10*time.Microsecond):
		return 100 * time.Nanosecond
	}
	return 10 * time.Nanosecond
}

func bytesString(v float64) string {
	switch {
	case v >= 1<<20:
		return fmt.Sprintf("%.1fMiB", v/(1<<20))
	case v >= 1<<10:
		return fmt.Sprintf("%.1fKiB", v/(1<<10))
	}
	return fmt.Sprintf("%.0fB", v)
}
