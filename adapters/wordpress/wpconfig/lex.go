package wpconfig

import (
	"math"
	"strconv"
	"strings"
)

type tokKind int

const (
	tkEOF      tokKind = iota
	tkIdent            // a name: define, true, ABSPATH, getenv
	tkVar              // $name (text is the name without $)
	tkString           // a string literal; val holds it decoded
	tkDQString         // a double-quoted or heredoc string; text holds it raw (escapes and $vars pending)
	tkNumber           // val holds the int or float
	tkCast             // (int), (string), ...; text holds the normalised type
	tkOp               // punctuation and operators
	tkBad              // something the lexer could not read; text says what
)

type token struct {
	kind tokKind
	text string
	val  Value
	line int
}

// lexer turns PHP source into tokens. It skips text outside <?php ... ?>,
// whitespace and comments, and records the line of the "stop editing"
// comment.
type lexer struct {
	src        string
	pos        int
	line       int
	inPHP      bool
	sawOpenTag bool
	markerLine int // line of the "That's all, stop editing" comment, 0 if none
}

const stopMarker = "that's all, stop editing"

var casts = map[string]string{
	"int": "int", "integer": "int", "bool": "bool", "boolean": "bool",
	"float": "float", "double": "float", "real": "float", "string": "string", "binary": "string",
}

// ops lists multi-character operators first, longest first.
var ops = []string{"===", "!==", "<=>", "**=", "...", "<<<", "??=", "==", "!=", "<>", "<=", ">=", "&&", "||", "??", "?:", ".=", "+=", "-=", "*=", "/=", "->", "::", "=>", "++", "--", "**", "<<", ">>"}

func (l *lexer) tokens() []token {
	var out []token
	for {
		t := l.next()
		out = append(out, t)
		if t.kind == tkEOF {
			return out
		}
	}
}

func (l *lexer) next() token {
	for {
		if !l.inPHP {
			i := strings.Index(l.src[l.pos:], "<?")
			if i < 0 {
				l.advance(len(l.src) - l.pos)
				return token{kind: tkEOF, line: l.line}
			}
			l.advance(i + 2)
			switch {
			case strings.HasPrefix(strings.ToLower(l.src[l.pos:]), "php"):
				l.advance(3)
			case strings.HasPrefix(l.src[l.pos:], "="):
				l.advance(1)
			}
			l.inPHP, l.sawOpenTag = true, true
			continue
		}
		if l.pos >= len(l.src) {
			return token{kind: tkEOF, line: l.line}
		}
		c := l.src[l.pos]
		switch {
		case c == '\n':
			l.line++
			l.pos++
			continue
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
			l.pos++
			continue
		case c == '#' || strings.HasPrefix(l.src[l.pos:], "//"):
			l.lineComment()
			continue
		case strings.HasPrefix(l.src[l.pos:], "/*"):
			l.blockComment()
			continue
		case strings.HasPrefix(l.src[l.pos:], "?>"):
			line := l.line
			l.advance(2)
			if strings.HasPrefix(l.src[l.pos:], "\n") {
				l.advance(1)
			}
			l.inPHP = false
			return token{kind: tkOp, text: ";", line: line}
		}
		return l.token()
	}
}

// advance moves n bytes forward, counting newlines.
func (l *lexer) advance(n int) {
	l.line += strings.Count(l.src[l.pos:l.pos+n], "\n")
	l.pos += n
}

func (l *lexer) noteComment(text string, line int) {
	if l.markerLine == 0 && strings.Contains(strings.ToLower(strings.ReplaceAll(text, "’", "'")), stopMarker) {
		l.markerLine = line
	}
}

func (l *lexer) lineComment() {
	start, line := l.pos, l.line
	for l.pos < len(l.src) && l.src[l.pos] != '\n' && !strings.HasPrefix(l.src[l.pos:], "?>") {
		l.pos++
	}
	l.noteComment(l.src[start:l.pos], line)
}

func (l *lexer) blockComment() {
	start, line := l.pos, l.line
	end := strings.Index(l.src[l.pos+2:], "*/")
	if end < 0 {
		l.advance(len(l.src) - l.pos)
	} else {
		l.advance(end + 4)
	}
	l.noteComment(l.src[start:l.pos], line)
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func (l *lexer) token() token {
	line := l.line
	s := l.src[l.pos:]
	c := s[0]
	switch {
	case isIdentStart(c) || c == '\\' && len(s) > 1 && isIdentStart(s[1]):
		i := 1
		for i < len(s) && (isIdentChar(s[i]) || s[i] == '\\' && i+1 < len(s) && isIdentStart(s[i+1])) {
			i++
		}
		l.pos += i
		name := s[:i]
		// A fully qualified name (\define, \getenv) is the global one.
		name = name[strings.LastIndex(name, "\\")+1:]
		return token{kind: tkIdent, text: name, line: line}
	case c == '$' && len(s) > 1 && isIdentStart(s[1]):
		i := 2
		for i < len(s) && isIdentChar(s[i]) {
			i++
		}
		l.pos += i
		return token{kind: tkVar, text: s[1:i], line: line}
	case c == '\'':
		return l.singleQuoted()
	case c == '"':
		return l.doubleQuoted()
	case c >= '0' && c <= '9' || c == '.' && len(s) > 1 && s[1] >= '0' && s[1] <= '9':
		return l.number()
	case c == '(':
		if t, ok := l.cast(); ok {
			return t
		}
	case strings.HasPrefix(s, "<<<"):
		if t, ok := l.heredoc(); ok {
			return t
		}
	}
	for _, op := range ops {
		if strings.HasPrefix(s, op) {
			l.pos += len(op)
			return token{kind: tkOp, text: op, line: line}
		}
	}
	l.pos++
	return token{kind: tkOp, text: string(c), line: line}
}

func (l *lexer) singleQuoted() token {
	line := l.line
	var b strings.Builder
	i := l.pos + 1
	for i < len(l.src) {
		c := l.src[i]
		switch {
		case c == '\\' && i+1 < len(l.src) && (l.src[i+1] == '\\' || l.src[i+1] == '\''):
			b.WriteByte(l.src[i+1])
			i += 2
		case c == '\'':
			l.advance(i + 1 - l.pos)
			return token{kind: tkString, val: strVal(b.String()), line: line}
		default:
			b.WriteByte(c)
			i++
		}
	}
	l.advance(len(l.src) - l.pos)
	return token{kind: tkBad, text: "unterminated single-quoted string", line: line}
}

func (l *lexer) doubleQuoted() token {
	line := l.line
	i := l.pos + 1
	for i < len(l.src) {
		switch l.src[i] {
		case '\\':
			i += 2
		case '"':
			raw := l.src[l.pos+1 : i]
			l.advance(i + 1 - l.pos)
			return token{kind: tkDQString, text: raw, line: line}
		default:
			i++
		}
	}
	l.advance(len(l.src) - l.pos)
	return token{kind: tkBad, text: "unterminated double-quoted string", line: line}
}

// heredoc reads <<<ID ... ID (a double-quoted body) and <<<'ID' ... ID
// (a literal body), with PHP 7.3's indented closing marker.
func (l *lexer) heredoc() (token, bool) {
	line := l.line
	s := l.src[l.pos+3:]
	head, _, ok := strings.Cut(s, "\n")
	if !ok {
		return token{}, false
	}
	id := strings.TrimSpace(head)
	nowdoc := false
	switch {
	case len(id) > 2 && id[0] == '\'' && id[len(id)-1] == '\'':
		id, nowdoc = id[1:len(id)-1], true
	case len(id) > 2 && id[0] == '"' && id[len(id)-1] == '"':
		id = id[1 : len(id)-1]
	}
	if id == "" || !isIdentStart(id[0]) {
		return token{}, false
	}
	body := s[len(head)+1:]
	lines := strings.SplitAfter(body, "\n")
	consumed := len(head) + 1
	for n, ln := range lines {
		trimmed := strings.TrimLeft(ln, " \t")
		if strings.HasPrefix(trimmed, id) && (len(trimmed) == len(id) || !isIdentChar(trimmed[len(id)])) {
			indent := len(ln) - len(trimmed)
			content := make([]string, n)
			for k := 0; k < n; k++ {
				content[k] = strings.TrimPrefix(lines[k], ln[:indent])
			}
			text := strings.TrimSuffix(strings.Join(content, ""), "\n")
			l.advance(3 + consumed + indent + len(id))
			if nowdoc {
				return token{kind: tkString, val: strVal(text), line: line}, true
			}
			return token{kind: tkDQString, text: strings.ReplaceAll(text, `"`, `\"`), line: line}, true
		}
		consumed += len(ln)
	}
	return token{}, false
}

// cast recognises (int), (bool), (string), ... with optional spaces.
func (l *lexer) cast() (token, bool) {
	s := l.src[l.pos+1:]
	end := strings.IndexByte(s, ')')
	if end < 0 || end > 20 {
		return token{}, false
	}
	typ, ok := casts[strings.ToLower(strings.Trim(s[:end], " \t"))]
	if !ok {
		return token{}, false
	}
	line := l.line
	l.pos += end + 2
	return token{kind: tkCast, text: typ, line: line}, true
}

// number reads a PHP integer or float literal: decimal, 0x hex, 0 or 0o
// octal, 0b binary, with _ between digits; integers that overflow become
// floats as in PHP.
func (l *lexer) number() token {
	line := l.line
	s := l.src[l.pos:]
	i := 0
	for i < len(s) && (isIdentChar(s[i]) || s[i] == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' ||
		(s[i] == '+' || s[i] == '-') && i > 0 && (s[i-1] == 'e' || s[i-1] == 'E') && !isHexPrefix(s)) {
		i++
	}
	lit := s[:i]
	l.pos += i
	v, ok := parseNumber(lit)
	if !ok {
		return token{kind: tkBad, text: "invalid numeric literal " + lit, line: line}
	}
	v.Line = line
	return token{kind: tkNumber, val: v, line: line}
}

func isHexPrefix(s string) bool {
	return len(s) > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
}

func parseNumber(lit string) (Value, bool) {
	if strings.HasPrefix(lit, "_") || strings.HasSuffix(lit, "_") || strings.Contains(lit, "__") {
		return Value{}, false
	}
	base, digits := 10, lit
	lower := strings.ToLower(lit)
	switch {
	case strings.HasPrefix(lower, "0x"):
		base, digits = 16, lit[2:]
	case strings.HasPrefix(lower, "0b"):
		base, digits = 2, lit[2:]
	case strings.HasPrefix(lower, "0o"):
		base, digits = 8, lit[2:]
	case len(lit) > 1 && lit[0] == '0' && !strings.ContainsAny(lit, ".eE"):
		base, digits = 8, lit[1:]
	}
	if strings.HasPrefix(digits, "_") {
		return Value{}, false
	}
	clean := strings.ReplaceAll(digits, "_", "")
	if clean == "" {
		return Value{}, false
	}
	if base == 10 && strings.ContainsAny(clean, ".eE") {
		if strings.Contains(lit, "_.") || strings.Contains(lit, "._") || strings.ContainsAny(clean, "xXbBoO") {
			return Value{}, false
		}
		f, err := strconv.ParseFloat(clean, 64)
		if err != nil && !isRangeErr(err) {
			return Value{}, false
		}
		return floatVal(f), true
	}
	n, err := strconv.ParseUint(clean, base, 64)
	if err != nil && !isRangeErr(err) {
		return Value{}, false
	}
	if err != nil || n > math.MaxInt64 {
		// Overflow: PHP makes it a float.
		f := 0.0
		for _, d := range clean {
			f = f*float64(base) + float64(digitVal(byte(d)))
		}
		return floatVal(f), true
	}
	return intVal(int64(n)), true
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 0
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
