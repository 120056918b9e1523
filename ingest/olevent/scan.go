package olevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"

	fastjson "github.com/goccy/go-json"
)

// frame is one open container during the pre-scan.
type frame struct {
	array   bool
	idx     int    // arrays: index of the current element
	key     string // objects: key of the current member
	wantKey bool   // objects: the next string token is a key
}

// scanner walks the token stream once, before anything is allocated per value, and enforces the limits that
// protect the decoder itself: syntax, top-level object, nesting depth and string size.
type scanner struct {
	lim   Limits
	stack []frame
}

func (s *scanner) run(raw []byte) *ValidationError {
	// Syntax by the standard library's allocation-free checker (goccy/go-json, which walks the tokens below much
	// faster, is more lenient: it takes numbers with leading zeros).
	if !json.Valid(raw) {
		var e any
		err := json.Unmarshal(raw, &e) // only to name the syntax error
		return invalid("$", RuleJSON, "the event is not valid JSON: %v", err)
	}
	dec := fastjson.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return invalid("$", RuleJSON, "the event is not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return invalid("$", RuleJSON, "the event must be a JSON object")
	}
	s.stack = append(s.stack[:0], frame{wantKey: true})
	for len(s.stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return invalid(s.path(), RuleJSON, "the event is not valid JSON at %s: %v", s.path(), err)
		}
		if ve := s.step(tok); ve != nil {
			return ve
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("$", RuleJSON, "the event has data after its closing brace")
	}
	return nil
}

func (s *scanner) step(tok json.Token) *ValidationError {
	top := &s.stack[len(s.stack)-1]
	if str, ok := tok.(string); ok && !top.array && top.wantKey {
		top.key = ""
		if ve := s.checkString(str, "key"); ve != nil {
			return ve
		}
		top.key, top.wantKey = str, false
		return nil
	}
	if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
		s.stack = s.stack[:len(s.stack)-1]
		return nil
	}
	s.beforeValue(top)
	switch t := tok.(type) {
	case json.Delim:
		s.stack = append(s.stack, frame{array: t == '[', idx: -1, wantKey: t == '{'})
		if len(s.stack) > s.lim.MaxJSONDepth {
			p := s.path()
			return invalid(p, RuleMaxDepth, "%s nests deeper than the limit of %d levels", p, s.lim.MaxJSONDepth)
		}
	case string:
		return s.checkString(t, "value")
	}
	return nil
}

func (s *scanner) beforeValue(top *frame) {
	if top.array {
		top.idx++
		return
	}
	top.wantKey = true
}

func (s *scanner) checkString(str, what string) *ValidationError {
	if len(str) <= s.lim.MaxStringBytes {
		return nil
	}
	p := s.path()
	return invalid(p, RuleMaxLength, "the string %s at %s is %d bytes, over the limit of %d", what, p, len(str), s.lim.MaxStringBytes)
}

// path renders the current position, e.g. "inputs[2].facets.schema".
func (s *scanner) path() string {
	var b strings.Builder
	for _, f := range s.stack {
		switch {
		case f.array && f.idx >= 0:
			b.WriteString("[" + strconv.Itoa(f.idx) + "]")
		case !f.array && f.key != "":
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
	}
	if b.Len() == 0 {
		return "$"
	}
	return b.String()
}
