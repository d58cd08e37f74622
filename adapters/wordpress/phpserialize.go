package wordpress

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mailsvc/mailsvc/adapters/wordpress/wpconfig"
)

// PHP values are represented in Go as:
//
//	null   -> nil
//	bool   -> bool
//	int    -> int64
//	float  -> float64
//	string -> string (raw bytes, not necessarily UTF-8)
//	array  -> *Array (ordered, int64 or string keys)
//
// Objects, enums and references are not supported: Unserialize rejects them.

// maxUnserializeDepth bounds array nesting so that hostile input cannot
// exhaust the stack.
const maxUnserializeDepth = 512

// Array is a PHP array: an ordered map whose keys are int64 or string.
// Insertion order is preserved; setting an existing key replaces the value
// in place, as PHP does.
type Array struct {
	keys  []any
	vals  []any
	index map[any]int
	next  int64 // PHP's next free integer key
}

// NewArray returns an empty PHP array.
func NewArray() *Array {
	return &Array{index: map[any]int{}}
}

// Len returns the number of elements.
func (a *Array) Len() int {
	if a == nil {
		return 0
	}
	return len(a.keys)
}

// At returns the key and value of the i-th element in order.
func (a *Array) At(i int) (key, value any) {
	return a.keys[i], a.vals[i]
}

// Keys returns the keys in order (each an int64 or a string).
func (a *Array) Keys() []any {
	if a == nil {
		return nil
	}
	return append([]any(nil), a.keys...)
}

// Get returns the value stored under key (an int64, int or string; numeric
// strings address integer keys as in PHP).
func (a *Array) Get(key any) (any, bool) {
	if a == nil {
		return nil, false
	}
	k, err := normalizeKey(key)
	if err != nil {
		return nil, false
	}
	i, ok := a.index[k]
	if !ok {
		return nil, false
	}
	return a.vals[i], true
}

// Set stores value under key (an int64, int or string; a canonical decimal
// string becomes an integer key, as PHP does). An existing key keeps its
// position.
func (a *Array) Set(key any, value any) error {
	k, err := normalizeKey(key)
	if err != nil {
		return err
	}
	a.set(k, value)
	return nil
}

func (a *Array) set(k any, value any) {
	if a.index == nil {
		a.index = map[any]int{}
	}
	if i, ok := a.index[k]; ok {
		a.vals[i] = value
		return
	}
	a.index[k] = len(a.keys)
	a.keys = append(a.keys, k)
	a.vals = append(a.vals, value)
	if n, ok := k.(int64); ok && n >= a.next && n < math.MaxInt64 {
		a.next = n + 1
	}
}

// Append adds value under the next free integer key, like PHP's `$a[] = v`.
func (a *Array) Append(value any) {
	a.set(a.next, value)
}

// normalizeKey converts a Go key to PHP's key: int64, or string unless the
// string is a canonical decimal integer.
func normalizeKey(key any) (any, error) {
	switch k := key.(type) {
	case int64:
		return k, nil
	case int:
		return int64(k), nil
	case string:
		if n, ok := phpNumericKey(k); ok {
			return n, nil
		}
		return k, nil
	default:
		return nil, fmt.Errorf("php array key must be int or string, got %T", key)
	}
}

// phpNumericKey reports whether s is a string PHP stores as an integer key:
// "0", or an optional "-" then a non-zero digit and digits, within int64.
func phpNumericKey(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if d == "" || (d[0] == '0' && (len(d) > 1 || s[0] == '-')) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// ErrUnserialize is wrapped by every Unserialize failure.
var ErrUnserialize = errors.New("php unserialize")

// Unserialize decodes one PHP-serialized value. Unlike PHP it rejects
// trailing bytes after the value; objects, enums and references are
// rejected too.
func Unserialize(data string) (any, error) {
	v, n, err := unserializePrefix(data)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("%w: %d trailing bytes at offset %d", ErrUnserialize, len(data)-n, n)
	}
	return v, nil
}

// unserializePrefix decodes the value at the start of data and returns how
// many bytes it used; PHP 8.2 ignores what follows.
func unserializePrefix(data string) (any, int, error) {
	p := &phpParser{data: data}
	v, err := p.value(0)
	if err != nil {
		return nil, 0, err
	}
	return v, p.pos, nil
}

type phpParser struct {
	data string
	pos  int
}

func (p *phpParser) fail(format string, args ...any) error {
	return fmt.Errorf("%w: %s at offset %d", ErrUnserialize, fmt.Sprintf(format, args...), p.pos)
}

func (p *phpParser) expect(s string) error {
	if !strings.HasPrefix(p.data[p.pos:], s) {
		return p.fail("expected %q", s)
	}
	p.pos += len(s)
	return nil
}

// until returns the bytes up to (not including) the terminator c, and moves
// past c.
func (p *phpParser) until(c byte) (string, error) {
	i := strings.IndexByte(p.data[p.pos:], c)
	if i < 0 {
		return "", p.fail("missing %q", c)
	}
	s := p.data[p.pos : p.pos+i]
	p.pos += i + 1
	return s, nil
}

// parseInt accepts PHP's integer syntax in serialized data: [+-]?[0-9]+.
func parseSerializedInt(s string) (int64, bool) {
	d := s
	if d != "" && (d[0] == '+' || d[0] == '-') {
		d = d[1:]
	}
	if d == "" {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "+"), 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

func (p *phpParser) value(depth int) (any, error) {
	if depth > maxUnserializeDepth {
		return nil, p.fail("nesting deeper than %d", maxUnserializeDepth)
	}
	if p.pos+1 >= len(p.data) {
		return nil, p.fail("unexpected end")
	}
	tag := p.data[p.pos]
	if tag == 'N' {
		if err := p.expect("N;"); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if p.data[p.pos+1] != ':' {
		return nil, p.fail("expected ':' after %q", tag)
	}
	switch tag {
	case 'b':
		return p.scalar("bool", func(s string) (any, bool) {
			switch s {
			case "0":
				return false, true
			case "1":
				return true, true
			}
			return nil, false
		})
	case 'i':
		return p.scalar("int", func(s string) (any, bool) { return parseSerializedInt(s) })
	case 'd':
		return p.scalar("float", func(s string) (any, bool) { return parseSerializedFloat(s) })
	case 's':
		return p.str()
	case 'a':
		return p.array(depth)
	case 'O', 'C', 'E', 'r', 'R', 'S':
		return nil, p.fail("unsupported PHP value type %q", tag)
	}
	return nil, p.fail("unknown PHP value type %q", tag)
}

// scalar reads the text of a b:, i: or d: value up to its ';' and
// converts it with conv; text conv refuses is a bad what.
func (p *phpParser) scalar(what string, conv func(string) (any, bool)) (any, error) {
	p.pos += 2
	s, err := p.until(';')
	if err != nil {
		return nil, err
	}
	v, ok := conv(s)
	if !ok {
		return nil, p.fail("bad %s %q", what, s)
	}
	return v, nil
}

func (p *phpParser) str() (string, error) {
	p.pos += 2
	ls, err := p.until(':')
	if err != nil {
		return "", err
	}
	n, ok := parseSerializedInt(ls)
	if !ok || n < 0 || strings.HasPrefix(ls, "+") || strings.HasPrefix(ls, "-") {
		return "", p.fail("bad string length %q", ls)
	}
	if err := p.expect(`"`); err != nil {
		return "", err
	}
	if int64(len(p.data)-p.pos) < n+2 {
		return "", p.fail("string of %d bytes runs past the end", n)
	}
	s := p.data[p.pos : p.pos+int(n)]
	p.pos += int(n)
	if err := p.expect(`";`); err != nil {
		return "", err
	}
	return s, nil
}

func (p *phpParser) array(depth int) (*Array, error) {
	p.pos += 2
	cs, err := p.until(':')
	if err != nil {
		return nil, err
	}
	count, ok := parseSerializedInt(cs)
	if !ok || count < 0 || strings.HasPrefix(cs, "+") || strings.HasPrefix(cs, "-") {
		return nil, p.fail("bad array count %q", cs)
	}
	if err := p.expect("{"); err != nil {
		return nil, err
	}
	// Each element takes at least 4 bytes ("i:0;N;" is 6), so a count larger
	// than the remaining input is certainly wrong; checking it first keeps
	// hostile counts from allocating.
	if count > int64(len(p.data)-p.pos) {
		return nil, p.fail("array count %d exceeds input", count)
	}
	a := NewArray()
	for i := int64(0); i < count; i++ {
		if p.pos+1 >= len(p.data) {
			return nil, p.fail("unexpected end in array")
		}
		var key any
		switch {
		case strings.HasPrefix(p.data[p.pos:], "i:"):
			n, err := p.scalar("int key", func(s string) (any, bool) { return parseSerializedInt(s) })
			if err != nil {
				return nil, err
			}
			key = n
		case strings.HasPrefix(p.data[p.pos:], "s:"):
			s, err := p.str()
			if err != nil {
				return nil, err
			}
			if n, ok := phpNumericKey(s); ok {
				key = n
			} else {
				key = s
			}
		default:
			return nil, p.fail("array key must be int or string")
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a.set(key, v)
	}
	if err := p.expect("}"); err != nil {
		return nil, err
	}
	return a, nil
}

// parseSerializedFloat accepts what PHP writes and reads for `d:`: decimal
// or exponent notation, INF, -INF and NAN.
func parseSerializedFloat(s string) (float64, bool) {
	switch s {
	case "INF":
		return math.Inf(1), true
	case "-INF":
		return math.Inf(-1), true
	case "NAN":
		return math.NaN(), true
	}
	if s == "" {
		return 0, false
	}
	// PHP's grammar: [+-]? ( [0-9]* "." [0-9]+ | [0-9]+ "."? [0-9]* ) ([eE][+-]?[0-9]+)?
	i := 0
	if s[i] == '+' || s[i] == '-' {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		ed := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			ed++
		}
		if ed == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return f, true // ±Inf or 0, as PHP's strtod gives
		}
		return 0, false
	}
	return f, true
}

// Serialize encodes v as PHP's serialize() does. Supported Go types: nil,
// bool, int, int64, float64, string, []byte and *Array.
func Serialize(v any) (string, error) {
	var b bytes.Buffer
	if err := serializeTo(&b, v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

func serializeTo(b *bytes.Buffer, v any, depth int) error {
	if depth > maxUnserializeDepth {
		return fmt.Errorf("php serialize: nesting deeper than %d", maxUnserializeDepth)
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("N;")
	case bool:
		if x {
			b.WriteString("b:1;")
		} else {
			b.WriteString("b:0;")
		}
	case int:
		fmt.Fprintf(b, "i:%d;", x)
	case int64:
		fmt.Fprintf(b, "i:%d;", x)
	case float64:
		b.WriteString("d:")
		b.WriteString(formatPHPFloat(x))
		b.WriteByte(';')
	case string:
		fmt.Fprintf(b, "s:%d:\"", len(x))
		b.WriteString(x)
		b.WriteString("\";")
	case []byte:
		fmt.Fprintf(b, "s:%d:\"", len(x))
		b.Write(x)
		b.WriteString("\";")
	case *Array:
		if x == nil {
			b.WriteString("a:0:{}")
			return nil
		}
		fmt.Fprintf(b, "a:%d:{", len(x.keys))
		for i, k := range x.keys {
			if err := serializeTo(b, k, depth+1); err != nil {
				return err
			}
			if err := serializeTo(b, x.vals[i], depth+1); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("php serialize: unsupported Go type %T", v)
	}
	return nil
}

// formatPHPFloat formats f as PHP 8 does with serialize_precision = -1:
// the shortest round-tripping digits, in exponent form ("1.0E+25") when the
// decimal exponent is below -4 or above 17 places, else in plain form
// without a trailing ".0".
func formatPHPFloat(f float64) string {
	if s, ok := wpconfig.PHPSpecialFloat(f); ok {
		return s
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // e.g. "-1.2345e+17"
	sign := ""
	if e[0] == '-' {
		sign = "-"
		e = e[1:]
	}
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	decpt := exp + 1 // digits before the decimal point
	if (decpt < 0 && decpt < -3) || (decpt >= 0 && decpt > 17) {
		m := digits[:1] + "." + digits[1:]
		if len(digits) == 1 {
			m += "0"
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return sign + m + "E" + es + strconv.Itoa(exp)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits))
	default:
		return sign + digits[:decpt] + "." + digits[decpt:]
	}
}

// phpTrim removes the bytes PHP's trim() removes by default.
func phpTrim(s string) string {
	return strings.Trim(s, " \t\n\r\x00\x0b")
}

// IsSerialized reports whether WordPress's is_serialized($data, strict=true)
// would treat s as serialized data.
func IsSerialized(s string) bool {
	s = phpTrim(s)
	if s == "N;" {
		return true
	}
	if len(s) < 4 || s[1] != ':' {
		return false
	}
	last := s[len(s)-1]
	if last != ';' && last != '}' {
		return false
	}
	switch tok := s[0]; tok {
	case 's':
		if s[len(s)-2] != '"' {
			return false
		}
		return hasDigitsColon(s[2:])
	case 'a', 'O', 'E':
		return hasDigitsColon(s[2:])
	case 'b', 'i', 'd':
		// ^t:[0-9.E+-]+;$ — PCRE's $ also matches before a final "\n",
		// which trimming has removed.
		body := s[2 : len(s)-1]
		if body == "" || last != ';' {
			return false
		}
		for i := 0; i < len(body); i++ {
			c := body[i]
			if !(c >= '0' && c <= '9') && c != '.' && c != 'E' && c != '+' && c != '-' {
				return false
			}
		}
		return true
	}
	return false
}

// hasDigitsColon reports whether s starts with one or more digits then ':'.
func hasDigitsColon(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i > 0 && i < len(s) && s[i] == ':'
}

// MaybeUnserialize mirrors WordPress's maybe_unserialize(): a value that
// IsSerialized is decoded (trimmed, trailing bytes ignored as PHP 8.2 does)
// and a decoding failure yields false, as @unserialize() does; anything else
// is returned unchanged as a string. Unlike PHP, serialized objects also
// yield false.
func MaybeUnserialize(s string) any {
	if !IsSerialized(s) {
		return s
	}
	v, _, err := unserializePrefix(phpTrim(s))
	if err != nil {
		return false
	}
	return v
}

// MaybeSerialize mirrors maybe_serialize() for the values this package
// writes: arrays are serialized, scalars become their PHP string form, and
// a string that already looks serialized is serialized again.
func MaybeSerialize(v any) (string, error) {
	switch x := v.(type) {
	case *Array:
		return Serialize(x)
	case string:
		if IsSerialized(x) {
			return Serialize(x)
		}
		return x, nil
	case nil:
		return "", nil
	case bool:
		if x {
			return "1", nil
		}
		return "", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	}
	return "", fmt.Errorf("maybe_serialize: unsupported Go type %T", v)
}

// Truthy reports PHP truthiness as used by empty(): false, 0, 0.0, "",
// "0", null and the empty array are false; everything else is true.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int64:
		return x != 0
	case int:
		return x != 0
	case float64:
		return x != 0 // NAN is truthy in PHP, and NaN != 0 holds
	case string:
		return x != "" && x != "0"
	case *Array:
		return x.Len() > 0
	}
	return true
}

// phpString converts a scalar PHP value to its string form as PHP's
// (string) cast does for the values found in WordPress meta.
func phpString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case bool:
		if x {
			return "1"
		}
		return ""
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return formatPHPFloat(x)
	case string:
		return x
	}
	return ""
}

// phpInt converts a scalar PHP value to int as PHP's (int) cast does for
// the values found in WordPress meta (leading decimal digits of strings).
func phpInt(v any) int64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
	case int64:
		return x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0
		}
		return int64(x)
	case string:
		s := strings.TrimLeft(x, " \t\n\r\v\f")
		end := 0
		if end < len(s) && (s[end] == '+' || s[end] == '-') {
			end++
		}
		for end < len(s) && s[end] >= '0' && s[end] <= '9' {
			end++
		}
		n, _ := strconv.ParseInt(s[:end], 10, 64)
		return n
	}
	return 0
}
