// Package audit writes the WAF's log: one JSON object per line, each line in one write(2), so lines from
// concurrent streams never interleave on the container's stdout (a write of a line under PIPE_BUF to a
// pipe, or to a file through the shared offset, is not split).
package audit

import (
	"encoding/json"
	"io"
	"sync"
)

// Line is the audit line of one blocked, detected, flagged or refused request (or response): rule ids,
// messages and where each rule matched (the variable and its key, such as "942100 ARGS:json.body": what an
// exclusion names), never bodies or matched values.
type Line struct {
	Event     string   `json:"event"`
	Action    string   `json:"action"`
	Phase     string   `json:"phase,omitempty"`
	RequestID string   `json:"request_id"`
	Method    string   `json:"method"`
	Path      string   `json:"path"`
	Client    string   `json:"client"`
	Status    int      `json:"status,omitempty"`
	RuleIDs   []int    `json:"rule_ids"`
	Messages  []string `json:"messages"`
	Matched   []string `json:"matched,omitempty"`
}

// Writer serialises lines onto one output.
type Writer struct {
	mu  sync.Mutex
	out io.Writer
}

// New writes to out (the process's stdout).
func New(out io.Writer) *Writer { return &Writer{out: out} }

// Decision writes an audit line (event "waf").
func (w *Writer) Decision(l Line) {
	l.Event = "waf"
	if l.Messages == nil {
		l.Messages = []string{}
	}
	w.write(l)
}

// Event writes a lifecycle line: {"event": name, ...fields}.
func (w *Writer) Event(name string, fields map[string]any) {
	line := map[string]any{"event": name}
	for k, v := range fields {
		line[k] = v
	}
	w.write(line)
}

func (w *Writer) write(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"event": "error", "message": "unencodable log line: " + err.Error()})
	}
	data = append(data, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	_, _ = w.out.Write(data) // stdout gone: nothing left to tell
}
