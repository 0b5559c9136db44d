package sse

import (
	"strconv"
	"strings"
	"time"
)

// decoded is everything a decoding run tells its caller.
type decoded struct {
	events     []Event
	lastID     string
	retry      time.Duration
	hasRetry   bool
	incomplete bool // the stream ended inside an event
}

// referenceDecode interprets a whole stream by the letter of the WHATWG
// rules, line by line, with none of the Decoder's machinery; the tests and
// the fuzz target compare the Decoder against it. incomplete follows the
// Decoder's documented rule: the stream ends in the middle of a line, or
// after a data, event or valid id field of an event it does not terminate.
func referenceDecode(stream string) decoded {
	var (
		out     decoded
		data    strings.Builder
		typ     string
		idBuf   string
		pending bool // a data, event or valid id field since the last blank line
	)
	s := strings.TrimPrefix(stream, "\uFEFF")
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			out.incomplete = s != "" || pending
			return out
		}
		line := s[:i]
		if strings.HasPrefix(s[i:], "\r\n") {
			s = s[i+2:]
		} else {
			s = s[i+1:]
		}

		if line == "" { // dispatch
			out.lastID = idBuf
			if data.Len() > 0 {
				out.events = append(out.events, Event{
					Type: typ,
					Data: strings.TrimSuffix(data.String(), "\n"),
					ID:   out.lastID,
				})
			}
			data.Reset()
			typ, pending = "", false
			continue
		}
		if line[0] == ':' {
			continue
		}
		name, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch name {
		case "event":
			typ, pending = value, true
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
			pending = true
		case "id":
			if !strings.Contains(value, "\x00") {
				idBuf, pending = value, true
			}
		case "retry":
			if value == "" || strings.Trim(value, "0123456789") != "" {
				break
			}
			ms, err := strconv.ParseInt(value, 10, 64)
			if err == nil && ms <= maxRetryMS {
				out.retry, out.hasRetry = time.Duration(ms)*time.Millisecond, true
			}
		}
	}
}
