package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/headwater-data/headwater/ingest/olevent"

	fastjson "github.com/goccy/go-json"
)

// frame is one open container during the pre-scan.
type frame struct {
	array   bool
	idx     int      // arrays: index of the current element
	key     string   // objects: key of the current member
	wantKey bool     // objects: the next string token is a key
	keys    []string // objects: the keys seen so far, while few
	keySet  map[string]struct{}
}

// smallObject is how many keys an object's frame keeps in a slice before it switches to a map.
const smallObject = 16

// seen records key and says whether the object had it already.
func (f *frame) seen(key string) bool {
	if f.keySet != nil {
		if _, dup := f.keySet[key]; dup {
			return true
		}
		f.keySet[key] = struct{}{}
		return false
	}
	if slices.Contains(f.keys, key) {
		return true
	}
	if f.keys = append(f.keys, key); len(f.keys) > smallObject {
		f.keySet = make(map[string]struct{}, 2*smallObject)
		for _, k := range f.keys {
			f.keySet[k] = struct{}{}
		}
		f.keys = nil
	}
	return false
}

// scanner walks the token stream once, before anything is allocated per value, and enforces the limits that
// protect the decoder itself and the rules that make the bytes mean one thing to every reader: syntax, top-level
// object, nesting depth, string size, UTF-8, and no duplicate keys (readers disagree on which one wins).
type scanner struct {
	lim   olevent.Limits
	stack []frame
	bad   lexIssue // the first byte-level defect; reported at the path of the token that contains it
}

func (s *scanner) run(raw []byte) *olevent.ValidationError {
	s.bad = lex(raw, s.lim.MaxJSONDepth)
	// Syntax by the standard library's allocation-free checker (goccy/go-json, which walks the tokens below much
	// faster, is more lenient: it takes numbers with leading zeros). Nesting beyond the limit is reported as
	// max-depth by the walk below, even where the checker gives up first.
	if s.bad.rule != olevent.RuleMaxDepth && !json.Valid(raw) {
		var e any
		err := json.Unmarshal(raw, &e) // only to name the syntax error
		return invalid("$", olevent.RuleJSON, "the event is not valid JSON: %v", err)
	}
	dec := fastjson.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return invalid("$", olevent.RuleJSON, "the event is not valid JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return invalid("$", olevent.RuleJSON, "the event must be a JSON object")
	}
	s.stack = append(s.stack[:0], frame{wantKey: true})
	for len(s.stack) > 0 {
		tok, err := dec.Token()
		if err != nil {
			return invalid(s.path(), olevent.RuleJSON, "the event is not valid JSON at %s: %v", s.path(), err)
		}
		if ve := s.step(tok); ve != nil {
			return ve
		}
		if s.bad.rule == olevent.RuleUTF8 && dec.InputOffset() > int64(s.bad.off) {
			p := s.path()
			return invalid(p, olevent.RuleUTF8, "the string at %s is not valid UTF-8 (byte offset %d): JSON text must be UTF-8", p, s.bad.off)
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalid("$", olevent.RuleJSON, "the event has data after its closing brace")
	}
	return nil
}

func (s *scanner) step(tok json.Token) *olevent.ValidationError {
	top := &s.stack[len(s.stack)-1]
	if str, ok := tok.(string); ok && !top.array && top.wantKey {
		top.key = ""
		if ve := s.checkString(str, "key"); ve != nil {
			return ve
		}
		top.key, top.wantKey = str, false
		if top.seen(str) {
			p := s.path()
			return invalid(p, olevent.RuleDuplicateKey, "%s is given twice: readers disagree on which value wins, so each key may appear once per object", p)
		}
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
			return invalid(p, olevent.RuleMaxDepth, "%s nests deeper than the limit of %d levels", p, s.lim.MaxJSONDepth)
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

func (s *scanner) checkString(str, what string) *olevent.ValidationError {
	if len(str) <= s.lim.MaxStringBytes {
		return nil
	}
	p := s.path()
	return invalid(p, olevent.RuleMaxLength, "the string %s at %s is %d bytes, over the limit of %d", what, p, len(str), s.lim.MaxStringBytes)
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
