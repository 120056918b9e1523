package oracle

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/headwater-data/headwater/ingest/olevent"
)

// lexIssue is the first byte-level defect of a document: its offset and the rule it breaks; off is -1 when none.
type lexIssue struct {
	off  int
	rule string
}

// lex walks the bytes once and finds what the token decoders hide: nesting deeper than maxDepth (found before the
// standard checker gives up at its own limit), invalid UTF-8 and escaped lone surrogates ("\ud800") inside strings,
// which one JSON reader keeps, another replaces with U+FFFD, and a third refuses. Syntax is left to json.Valid.
func lex(raw []byte, maxDepth int) lexIssue { return lexText(raw, maxDepth, true) }

// lexText is lex; with text false it checks only the nesting (and skips strings whatever their bytes).
func lexText(raw []byte, maxDepth int, text bool) lexIssue {
	depth := 0
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '"':
			j, rule := lexString(raw, i+1, text)
			if rule != "" {
				return lexIssue{off: j, rule: rule}
			}
			i = j - 1
		case '{', '[':
			if depth++; depth > maxDepth {
				return lexIssue{off: i, rule: olevent.RuleMaxDepth}
			}
		case '}', ']':
			depth--
		}
	}
	return lexIssue{off: -1}
}

// lexString scans a string from i (just after its opening quote) and returns the offset after its closing quote,
// or the offset of the first invalid UTF-8 byte or lone surrogate escape with RuleUTF8.
func lexString(raw []byte, i int, text bool) (int, string) {
	for i < len(raw) {
		c := raw[i]
		switch {
		case c == '"':
			return i + 1, ""
		case c == '\\':
			n, ok := escapeLen(raw, i)
			if !ok && text {
				return i, olevent.RuleUTF8
			}
			if !ok {
				n = 2
			}
			i += n
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 && text {
				return i, olevent.RuleUTF8
			}
			i += size // an invalid byte is skipped alone (size 1)
		}
	}
	return i, "" // unterminated: json.Valid reports it
}

// escapeLen is the length of the escape at raw[i] ('\\'); a \u escape of a surrogate must be a high surrogate
// followed by a \u escape of a low one.
func escapeLen(raw []byte, i int) (int, bool) {
	if i+1 >= len(raw) || raw[i+1] != 'u' {
		return 2, true
	}
	r, ok := hex4(raw, i+2)
	if !ok || !utf16.IsSurrogate(r) {
		return 2, true // a malformed \u is a syntax error json.Valid reports
	}
	if r >= 0xdc00 || i+7 >= len(raw) || raw[i+6] != '\\' || raw[i+7] != 'u' {
		return 0, false
	}
	if lo, ok := hex4(raw, i+8); !ok || lo < 0xdc00 || lo > 0xdfff {
		return 0, false
	}
	return 12, true
}

func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, c := range raw[i : i+4] {
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

// TooDeep says whether raw nests deeper than maxDepth (strings are skipped; syntax is not checked).
func TooDeep(raw []byte, maxDepth int) bool {
	return lexText(raw, maxDepth, false).rule == olevent.RuleMaxDepth
}
