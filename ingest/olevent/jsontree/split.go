package jsontree

// Split checks that src is valid JSON exactly as encoding/json.Valid does (any bytes inside strings, escapes
// well-formed, nesting at most maxDepth) and, when its value is an array, returns the spans of its elements
// (capacity capped, in src). isArray is false for any other value; null counts as an empty array (as goccy/go-json
// and encoding/json unmarshal it into a slice). It builds no tree: the gateway splits a batch body with it in one
// pass, and each element is then parsed on its own.
func Split(src []byte, maxDepth int) (items [][]byte, isArray, ok bool) {
	s := skipper{src: src, max: maxDepth}
	s.space()
	first := s.i
	if s.i < len(src) && src[s.i] == '[' {
		isArray = true
		items, ok = s.array(true)
	} else {
		ok = s.value()
		isArray = ok && string(src[first:s.i]) == "null"
	}
	s.space()
	if !ok || s.i != len(src) {
		return nil, false, false
	}
	return items, isArray, true
}

type skipper struct {
	src      []byte
	i, depth int
	max      int
}

func (s *skipper) space() {
	for s.i < len(s.src) {
		switch s.src[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *skipper) value() bool {
	if s.i >= len(s.src) {
		return false
	}
	switch c := s.src[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		_, ok := s.array(false)
		return ok
	case c == '"':
		return s.string()
	case c == '-' || isDigit(c):
		end, ok := scanNumber(s.src, s.i)
		s.i = end
		return ok
	case c == 't':
		return s.word("true")
	case c == 'f':
		return s.word("false")
	case c == 'n':
		return s.word("null")
	}
	return false
}

func (s *skipper) word(w string) bool {
	if len(s.src)-s.i < len(w) || string(s.src[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *skipper) object() bool {
	if s.depth++; s.depth > s.max {
		return false
	}
	s.i++
	s.space()
	if s.i < len(s.src) && s.src[s.i] == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		if s.i >= len(s.src) || s.src[s.i] != '"' || !s.string() {
			return false
		}
		s.space()
		if s.i >= len(s.src) || s.src[s.i] != ':' {
			return false
		}
		s.i++
		s.space()
		if !s.value() {
			return false
		}
		s.space()
		if s.i >= len(s.src) {
			return false
		}
		switch s.src[s.i] {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// array skips an array; with keep it returns its elements' spans.
func (s *skipper) array(keep bool) ([][]byte, bool) {
	if s.depth++; s.depth > s.max {
		return nil, false
	}
	s.i++
	s.space()
	var items [][]byte
	if s.i < len(s.src) && s.src[s.i] == ']' {
		s.i++
		s.depth--
		return items, true
	}
	for {
		start := s.i
		if !s.value() {
			return nil, false
		}
		if keep {
			items = append(items, s.src[start:s.i:s.i])
		}
		s.space()
		if s.i >= len(s.src) {
			return nil, false
		}
		switch s.src[s.i] {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			s.depth--
			return items, true
		default:
			return nil, false
		}
	}
}

// string skips a string: any byte but a control character, escapes well-formed (a \u escape of a surrogate is
// fine here: encoding/json.Valid takes it).
func (s *skipper) string() bool {
	s.i++
	for s.i < len(s.src) {
		c := s.src[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if s.i+1 >= len(s.src) {
				return false
			}
			switch s.src[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if _, ok := hex4(s.src, s.i+2); !ok {
					return false
				}
				s.i += 6
			default:
				return false
			}
		case c < 0x20:
			return false
		default:
			s.i++
		}
	}
	return false
}
