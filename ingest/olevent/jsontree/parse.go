// Package jsontree parses one JSON document in a single strict pass into a compact tree that keeps every value's
// byte span (ADR 0037). The pass checks what the event decoder's limits need as it goes: RFC 8259 syntax exactly as
// encoding/json.Valid has it, nesting depth, decoded string size (keys too), UTF-8 and escaped lone surrogates, and
// duplicate keys. It says only whether the document passed: the decoder names a refusal's field and rule itself.
// Strings without escapes share the source's memory, so a parse costs a handful of allocations, not one per
// value; the source must not change while anything taken from the tree is in use.
package jsontree

import (
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Kind is a JSON value's type.
type Kind uint8

const (
	Null Kind = iota
	False
	True
	Number
	String
	Array
	Object
)

// Node is one value. Start and End are its byte span in the source.
type Node struct {
	Kind       Kind
	Start, End int32
	Str        string // String: the decoded value; Number: the literal as sent
	first, n   int32  // Array: Doc.elems[first:first+n]; Object: Doc.members[first:first+n]
}

// Member is one key of an object and its value's node.
type Member struct {
	Key string
	Val int32
}

// Doc is a parsed document; node 0 is the root. It is read-only once parsed.
type Doc struct {
	src     []byte
	nodes   []Node
	members []Member
	elems   []int32
	scratch parser // the last parse's scratch stacks, kept for the next parse of a pooled Doc
}

// docs recycles Docs (their node, member and element arrays) between parses; see Release.
var docs = sync.Pool{New: func() any { return new(Doc) }}

// Release returns d to the parser's pool: nothing of d (nodes, members, elements) may be used after it. Strings
// and spans taken from d stay valid (they point into the source, not into d).
func (d *Doc) Release() {
	d.src = nil
	docs.Put(d)
}

// Limits bound the document; both must be positive.
type Limits struct {
	MaxDepth  int // containers nested in each other, the root counting as 1
	MaxString int // decoded bytes of any string or key
}

// smallObject is how many members an object's duplicate check compares one by one before it uses a map.
const smallObject = 16

type parser struct {
	src   []byte
	str   string // src as a string sharing its memory: unescaped strings are slices of it
	i     int
	depth int
	lim   Limits
	doc   *Doc
	mstk  []Member // members of the objects being parsed
	estk  []int32  // elements of the arrays being parsed
	buf   []byte   // scratch for strings with escapes
}

// Parse parses src, which must be exactly one JSON value with optional surrounding whitespace. ok is false when
// src breaks the syntax or a limit, or has invalid UTF-8, a lone surrogate escape or a duplicate key. The tree
// keeps src (not a copy) for Raw and for the strings without escapes: the caller must not change it.
func Parse(src []byte, lim Limits) (doc *Doc, ok bool) {
	d := docs.Get().(*Doc)
	d.src, d.nodes, d.members, d.elems = src, d.nodes[:0], d.members[:0], d.elems[:0]
	if want := len(src)/8 + 4; cap(d.nodes) < want {
		d.nodes = make([]Node, 0, want)
	}
	p := &d.scratch
	// The strings share src's memory (no copy): src must not change, which Parse already requires for Raw. A
	// copy here was a second buffer of the event's size that every string kept from it held on to (ADR 0040).
	str := unsafe.String(unsafe.SliceData(src), len(src))
	*p = parser{src: src, str: str, lim: lim, doc: d, mstk: p.mstk[:0], estk: p.estk[:0], buf: p.buf[:0]}
	p.skipSpace()
	ok = p.value()
	p.skipSpace()
	ok = ok && p.i == len(src)
	p.src, p.str, p.doc = nil, "", nil
	if !ok {
		d.Release()
		return nil, false
	}
	return d, true
}

func (p *parser) skipSpace() {
	for p.i < len(p.src) {
		switch p.src[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) add(n Node) int32 {
	p.doc.nodes = append(p.doc.nodes, n)
	return int32(len(p.doc.nodes) - 1)
}

func (p *parser) value() bool {
	if p.i >= len(p.src) {
		return false
	}
	switch c := p.src[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		start := p.i
		s, ok := p.string()
		if !ok {
			return false
		}
		p.add(Node{Kind: String, Start: int32(start), End: int32(p.i), Str: s})
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return p.literal("true", True)
	case c == 'f':
		return p.literal("false", False)
	case c == 'n':
		return p.literal("null", Null)
	}
	return false
}

func (p *parser) literal(word string, k Kind) bool {
	if len(p.src)-p.i < len(word) || p.str[p.i:p.i+len(word)] != word {
		return false
	}
	p.add(Node{Kind: k, Start: int32(p.i), End: int32(p.i + len(word))})
	p.i += len(word)
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() bool {
	start := p.i
	end, ok := scanNumber(p.src, p.i)
	if !ok {
		return false
	}
	p.i = end
	p.add(Node{Kind: Number, Start: int32(start), End: int32(end), Str: p.str[start:end]})
	return true
}

// scanNumber returns the end of the number literal at src[i], and whether it is one.
func scanNumber(src []byte, i int) (int, bool) {
	digits := func() bool {
		n := 0
		for i < len(src) && isDigit(src[i]) {
			i++
			n++
		}
		return n > 0
	}
	if src[i] == '-' {
		i++
	}
	switch {
	case i < len(src) && src[i] == '0':
		i++
	case !digits():
		return i, false
	}
	if i < len(src) && src[i] == '.' {
		i++
		if !digits() {
			return i, false
		}
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		i++
		if i < len(src) && (src[i] == '+' || src[i] == '-') {
			i++
		}
		if !digits() {
			return i, false
		}
	}
	return i, true
}

func (p *parser) enter() bool {
	p.depth++
	return p.depth <= p.lim.MaxDepth
}

func (p *parser) object() bool {
	if !p.enter() {
		return false
	}
	self := p.add(Node{Kind: Object, Start: int32(p.i)})
	p.i++ // '{'
	base := len(p.mstk)
	var seen map[string]struct{}
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == '}' {
		p.i++
	} else {
		for {
			if p.i >= len(p.src) || p.src[p.i] != '"' {
				return false
			}
			key, ok := p.string()
			if !ok {
				return false
			}
			if seen, ok = p.fresh(base, key, seen); !ok {
				return false
			}
			p.skipSpace()
			if p.i >= len(p.src) || p.src[p.i] != ':' {
				return false
			}
			p.i++
			p.skipSpace()
			val := int32(len(p.doc.nodes))
			if !p.value() {
				return false
			}
			p.mstk = append(p.mstk, Member{Key: key, Val: val})
			p.skipSpace()
			if p.i >= len(p.src) {
				return false
			}
			if c := p.src[p.i]; c == ',' {
				p.i++
				p.skipSpace()
				continue
			} else if c == '}' {
				p.i++
				break
			}
			return false
		}
	}
	n := &p.doc.nodes[self]
	n.End, n.first, n.n = int32(p.i), int32(len(p.doc.members)), int32(len(p.mstk)-base)
	p.doc.members = append(p.doc.members, p.mstk[base:]...)
	p.mstk = p.mstk[:base]
	p.depth--
	return true
}

// fresh says whether key is new in the object whose members start at base.
func (p *parser) fresh(base int, key string, seen map[string]struct{}) (map[string]struct{}, bool) {
	ms := p.mstk[base:]
	if seen == nil && len(ms) < smallObject {
		for _, m := range ms {
			if m.Key == key {
				return nil, false
			}
		}
		return nil, true
	}
	if seen == nil {
		seen = make(map[string]struct{}, 2*len(ms))
		for _, m := range ms {
			seen[m.Key] = struct{}{}
		}
	}
	if _, dup := seen[key]; dup {
		return seen, false
	}
	seen[key] = struct{}{}
	return seen, true
}

func (p *parser) array() bool {
	if !p.enter() {
		return false
	}
	self := p.add(Node{Kind: Array, Start: int32(p.i)})
	p.i++ // '['
	base := len(p.estk)
	p.skipSpace()
	if p.i < len(p.src) && p.src[p.i] == ']' {
		p.i++
	} else {
		for {
			val := int32(len(p.doc.nodes))
			if !p.value() {
				return false
			}
			p.estk = append(p.estk, val)
			p.skipSpace()
			if p.i >= len(p.src) {
				return false
			}
			if c := p.src[p.i]; c == ',' {
				p.i++
				p.skipSpace()
				continue
			} else if c == ']' {
				p.i++
				break
			}
			return false
		}
	}
	n := &p.doc.nodes[self]
	n.End, n.first, n.n = int32(p.i), int32(len(p.doc.elems)), int32(len(p.estk)-base)
	p.doc.elems = append(p.doc.elems, p.estk[base:]...)
	p.estk = p.estk[:base]
	p.depth--
	return true
}

// string reads the string at p.i (its opening quote) and returns it decoded.
func (p *parser) string() (string, bool) {
	p.i++
	start := p.i
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			s := p.str[start:p.i]
			p.i++
			return s, len(s) <= p.lim.MaxString
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.src[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			p.i += size
		}
	}
	return "", false
}

// escaped continues a string from its first backslash, decoding into the scratch buffer.
func (p *parser) escaped(start int) (string, bool) {
	b := append(p.buf[:0], p.src[start:p.i]...)
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '"':
			p.i++
			p.buf = b
			if len(b) > p.lim.MaxString {
				return "", false
			}
			return string(b), true
		case c == '\\':
			var ok bool
			if b, ok = p.escape(b); !ok {
				return "", false
			}
		case c < 0x20:
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.src[p.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false
			}
			b = append(b, p.src[p.i:p.i+size]...)
			p.i += size
		}
	}
	return "", false
}

// escape decodes the escape at p.i (a backslash). A \u escape of a surrogate must be a high one followed by the
// \u escape of a low one.
func (p *parser) escape(b []byte) ([]byte, bool) {
	if p.i+1 >= len(p.src) {
		return b, false
	}
	c := p.src[p.i+1]
	p.i += 2
	switch c {
	case '"', '\\', '/':
		return append(b, c), true
	case 'b':
		return append(b, '\b'), true
	case 'f':
		return append(b, '\f'), true
	case 'n':
		return append(b, '\n'), true
	case 'r':
		return append(b, '\r'), true
	case 't':
		return append(b, '\t'), true
	case 'u':
	default:
		return b, false
	}
	r, ok := hex4(p.src, p.i)
	if !ok {
		return b, false
	}
	p.i += 4
	if !utf16.IsSurrogate(r) {
		return utf8.AppendRune(b, r), true
	}
	if r >= 0xdc00 || p.i+6 > len(p.src) || p.src[p.i] != '\\' || p.src[p.i+1] != 'u' {
		return b, false
	}
	lo, ok := hex4(p.src, p.i+2)
	if !ok || lo < 0xdc00 || lo > 0xdfff {
		return b, false
	}
	p.i += 6
	return utf8.AppendRune(b, utf16.DecodeRune(r, lo)), true
}

func hex4(src []byte, i int) (rune, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var r rune
	for _, c := range src[i : i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}
