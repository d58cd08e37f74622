package wpconfig

import (
	"math"
	"strconv"
	"strings"
)

// Kind is the PHP type of a constant's value.
type Kind int

// Kinds of values a wp-config.php constant can hold.
const (
	String Kind = iota
	Int
	Float
	Bool
	Null
)

// String returns the PHP name of the kind.
func (k Kind) String() string {
	switch k {
	case String:
		return "string"
	case Int:
		return "int"
	case Float:
		return "float"
	case Bool:
		return "bool"
	case Null:
		return "null"
	}
	return "unknown"
}

// Value is the value of a constant or variable read from wp-config.php.
// Only the field of its Kind is meaningful. Line is where it was defined.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Float float64
	Bool  bool
	Line  int
}

// String returns the value converted to a string as PHP does: true is "1",
// false and null are "", floats use PHP's default precision of 14
// significant digits.
func (v Value) String() string {
	switch v.Kind {
	case String:
		return v.Str
	case Int:
		return strconv.FormatInt(v.Int, 10)
	case Float:
		return phpFloatString(v.Float)
	case Bool:
		if v.Bool {
			return "1"
		}
		return ""
	}
	return ""
}

// Truthy reports whether PHP treats the value as true in a condition.
func (v Value) Truthy() bool {
	switch v.Kind {
	case String:
		return v.Str != "" && v.Str != "0"
	case Int:
		return v.Int != 0
	case Float:
		return v.Float != 0
	case Bool:
		return v.Bool
	}
	return false
}

func strVal(s string) Value    { return Value{Kind: String, Str: s} }
func intVal(n int64) Value     { return Value{Kind: Int, Int: n} }
func boolVal(b bool) Value     { return Value{Kind: Bool, Bool: b} }
func floatVal(f float64) Value { return Value{Kind: Float, Float: f} }

var nullVal = Value{Kind: Null}

// PHPSpecialFloat spells the floats PHP writes the same at every
// precision: NAN, INF, -INF, 0 and -0. It reports false for any other.
func PHPSpecialFloat(f float64) (string, bool) {
	switch {
	case math.IsNaN(f):
		return "NAN", true
	case math.IsInf(f, 1):
		return "INF", true
	case math.IsInf(f, -1):
		return "-INF", true
	case f == 0 && math.Signbit(f):
		return "-0", true
	case f == 0:
		return "0", true
	}
	return "", false
}

// phpFloatString formats f as PHP's (string) cast does with precision=14:
// %.14G with PHP's spelling of exponents (1.0E+25) and of INF/NAN.
func phpFloatString(f float64) string {
	if s, ok := PHPSpecialFloat(f); ok {
		return s
	}
	const precision = 14
	e := strconv.FormatFloat(f, 'e', precision-1, 64) // d.ddddddddddddde±XX
	mant, expStr, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expStr)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.TrimRight(strings.Replace(mant, ".", "", 1), "0")
	if digits == "" {
		digits = "0"
	}
	var out string
	if exp < -4 || exp >= precision {
		frac := digits[1:]
		if frac == "" {
			frac = "0"
		}
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		out = digits[:1] + "." + frac + "E" + sign + strconv.Itoa(exp)
	} else if exp < 0 {
		out = "0." + strings.Repeat("0", -exp-1) + digits
	} else if len(digits) <= exp+1 {
		out = digits + strings.Repeat("0", exp+1-len(digits))
	} else {
		out = digits[:exp+1] + "." + digits[exp+1:]
	}
	if neg {
		out = "-" + out
	}
	return out
}

// isNumeric reports whether s is a PHP numeric string (leading and
// trailing whitespace allowed) and returns its value.
func isNumeric(s string) (Value, bool) {
	t := strings.Trim(s, " \t\n\r\v\f")
	if t == "" {
		return Value{}, false
	}
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		return intVal(n), true
	}
	// PHP numeric strings are decimal only: no hex, no underscores, no inf.
	for _, r := range t {
		if !strings.ContainsRune("0123456789.eE+-", r) {
			return Value{}, false
		}
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return Value{}, false
	}
	return floatVal(f), true
}

// toNumber converts a value to int or float for arithmetic, as PHP does for
// numeric operands (non-numeric strings count as 0; ok is then false).
func toNumber(v Value) (Value, bool) {
	switch v.Kind {
	case Int, Float:
		return v, true
	case Bool:
		if v.Bool {
			return intVal(1), true
		}
		return intVal(0), true
	case Null:
		return intVal(0), true
	}
	if n, ok := isNumeric(v.Str); ok {
		return n, true
	}
	return intVal(0), false
}

func asFloat(v Value) float64 {
	if v.Kind == Int {
		return float64(v.Int)
	}
	return v.Float
}

// toInt converts a value as PHP's (int) cast does.
func toInt(v Value) int64 {
	switch v.Kind {
	case Int:
		return v.Int
	case Float:
		if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
			return 0
		}
		return int64(v.Float)
	case Bool:
		if v.Bool {
			return 1
		}
		return 0
	case String:
		// Leading numeric prefix, as PHP's (int) "12abc" === 12.
		t := strings.TrimLeft(v.Str, " \t\n\r\v\f")
		end := 0
		if end < len(t) && (t[end] == '+' || t[end] == '-') {
			end++
		}
		for end < len(t) && t[end] >= '0' && t[end] <= '9' {
			end++
		}
		if n, ok := isNumeric(t[:end]); ok && n.Kind == Int {
			return n.Int
		}
		if f, ok := isNumeric(v.Str); ok {
			return toInt(f)
		}
	}
	return 0
}

// looseEqual is PHP 8's == operator.
func looseEqual(a, b Value) bool {
	if a.Kind == Null && b.Kind == Null {
		return true
	}
	if a.Kind == Bool || b.Kind == Bool {
		return a.Truthy() == b.Truthy()
	}
	if a.Kind == Null || b.Kind == Null {
		if a.Kind == String || b.Kind == String {
			return a.String() == b.String()
		}
		return a.Truthy() == b.Truthy()
	}
	if a.Kind == String && b.Kind == String {
		na, oka := isNumeric(a.Str)
		nb, okb := isNumeric(b.Str)
		if oka && okb {
			return asFloat(na) == asFloat(nb)
		}
		return a.Str == b.Str
	}
	if a.Kind == String || b.Kind == String {
		s, n := a, b
		if b.Kind == String {
			s, n = b, a
		}
		ns, ok := isNumeric(s.Str)
		if !ok {
			return s.Str == n.String()
		}
		return asFloat(ns) == asFloat(n)
	}
	return asFloat(a) == asFloat(b)
}

// strictEqual is PHP's === operator.
func strictEqual(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case String:
		return a.Str == b.Str
	case Int:
		return a.Int == b.Int
	case Float:
		return a.Float == b.Float
	case Bool:
		return a.Bool == b.Bool
	}
	return true
}

// compare orders two values as PHP 8's <=> does for scalars.
func compare(a, b Value) int {
	if a.Kind == String && b.Kind == String {
		na, oka := isNumeric(a.Str)
		nb, okb := isNumeric(b.Str)
		if !oka || !okb {
			return strings.Compare(a.Str, b.Str)
		}
		a, b = na, nb
	}
	if a.Kind == Bool || b.Kind == Bool || a.Kind == Null || b.Kind == Null {
		x, y := a.Truthy(), b.Truthy()
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	}
	na, _ := toNumber(a)
	nb, _ := toNumber(b)
	x, y := asFloat(na), asFloat(nb)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
