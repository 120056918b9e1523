package olevent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// canonicalJSON re-serialises a JSON document in an RFC 8785-like canonical form: object keys sorted by code
// point (byte order of UTF-8, which equals RFC 8785's UTF-16 order for the BMP), no insignificant whitespace,
// strings escaped minimally (no HTML escaping), integers written as integers and other numbers in the shortest
// form that round-trips a float64.
func canonicalJSON(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("olevent: canonical json: %w", err)
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteCanonicalString writes s as the canonical form writes a string, and WriteCanonicalNumber a number literal
// (an error when it is out of float64 range): the decoder canonicalises its own parse tree with them (ADR 0037).
func WriteCanonicalString(b *bytes.Buffer, s string) { writeString(b, s) }

// WriteCanonicalNumber: see WriteCanonicalString.
func WriteCanonicalNumber(b *bytes.Buffer, lit string) error { return writeNumber(b, json.Number(lit)) }

func writeCanonical(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		return writeObject(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		return writeNumber(b, x)
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	}
	return nil
}

func writeObject(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeString(b, k)
		b.WriteByte(':')
		if err := writeCanonical(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// writeString writes s as encoding/json does without HTML escaping. Strings of printable ASCII other than '"' and
// '\\' (nearly all of an event) need no escaping and are written directly; the others go through encoding/json,
// so the bytes, and with them deterministic event ids, stay exactly as before.
func writeString(b *bytes.Buffer, s string) {
	if plainASCII(s) {
		b.WriteByte('"')
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}

// writeNumber writes integers exactly (any size, so ids and snapshot numbers keep every digit) and other
// numbers as the shortest float64 representation, so 1.50 and 1.5 are the same number.
func writeNumber(b *bytes.Buffer, n json.Number) error {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		b.WriteString(canonicalInteger(s))
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return fmt.Errorf("olevent: canonical json: number %q out of range", s)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		b.WriteString(strconv.FormatFloat(f, 'f', -1, 64))
		return nil
	}
	b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	return nil
}

// canonicalInteger turns "-0" into "0"; JSON forbids leading zeros, so nothing else varies.
func canonicalInteger(s string) string {
	if s == "-0" {
		return "0"
	}
	return s
}

// plainASCII reports whether s has only the bytes 0x20-0x7e other than '"' and '\\'.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
