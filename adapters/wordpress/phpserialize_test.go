package wordpress

import (
	"github.com/mailsvc/mailsvc/internal/testenv"

	"errors"
	"math"
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// arr builds an *Array from alternating keys and values.
func arr(kv ...any) *Array {
	a := NewArray()
	for i := 0; i < len(kv); i += 2 {
		if err := a.Set(kv[i], kv[i+1]); err != nil {
			panic(err)
		}
	}
	return a
}

// equalPHP compares two decoded PHP values, including key order.
func equalPHP(a, b any) bool {
	switch x := a.(type) {
	case *Array:
		y, ok := b.(*Array)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for i := 0; i < x.Len(); i++ {
			ka, va := x.At(i)
			kb, vb := y.At(i)
			if ka != kb || !equalPHP(va, vb) {
				return false
			}
		}
		return true
	case float64:
		y, ok := b.(float64)
		if !ok {
			return false
		}
		if math.IsNaN(x) {
			return math.IsNaN(y)
		}
		return x == y && math.Signbit(x) == math.Signbit(y)
	}
	return reflect.DeepEqual(a, b)
}

// Each input is what PHP 8.2 serialize() produces for the value; the
// inputs were generated with php -r 'echo serialize(...);'.
var serializeVectors = []struct {
	name string
	php  string
	want any
}{
	{"null", "N;", nil},
	{"true", "b:1;", true},
	{"false", "b:0;", false},
	{"int", "i:1700000000;", int64(1700000000)},
	{"negative int", "i:-42;", int64(-42)},
	{"int64 max", "i:9223372036854775807;", int64(math.MaxInt64)},
	{"float", "d:0.1;", 0.1},
	{"integral float", "d:1;", 1.0},
	{"negative zero", "d:-0;", math.Copysign(0, -1)},
	{"big float", "d:1.0E+25;", 1e25},
	{"float 1e16", "d:10000000000000000;", 1e16},
	{"float 1e17", "d:1.0E+17;", 1e17},
	{"float 1/3", "d:0.3333333333333333;", 1.0 / 3},
	{"small float", "d:1.5E-5;", 1.5e-5},
	{"float 0.0001", "d:0.0001;", 0.0001},
	{"INF", "d:INF;", math.Inf(1)},
	{"-INF", "d:-INF;", math.Inf(-1)},
	{"NAN", "d:NAN;", math.NaN()},
	{"empty string", `s:0:"";`, ""},
	{"utf8 byte length", `s:9:"héloïse";`, "héloïse"},
	{"quotes and semicolons", `s:6:"a";b"}";`, `a";b"}`},
	{"NUL byte", "s:3:\"a\x00b\";", "a\x00b"},
	{"list", `a:2:{i:0;s:5:"admin";i:1;s:9:"héloïse";}`, arr(0, "admin", 1, "héloïse")},
	{"gap in keys", `a:1:{i:1;b:1;}`, arr(1, true)},
	{"caps", `a:1:{s:13:"administrator";b:1;}`, arr("administrator", true)},
	{"application password item", `a:1:{i:0;a:7:{s:4:"uuid";s:36:"11111111-2222-4333-8444-555555555555";s:6:"app_id";s:0:"";s:4:"name";s:10:"Go service";s:8:"password";s:49:"$generic$ZLGy4f-xaDioDcoHII2Yz6GofsboINn0UnN4kA6m";s:7:"created";i:1700000000;s:9:"last_used";i:1700003600;s:7:"last_ip";s:11:"203.0.113.7";}}`,
		arr(0, arr("uuid", "11111111-2222-4333-8444-555555555555", "app_id", "", "name", "Go service",
			"password", "$generic$ZLGy4f-xaDioDcoHII2Yz6GofsboINn0UnN4kA6m", "created", int64(1700000000),
			"last_used", int64(1700003600), "last_ip", "203.0.113.7"))},
	{"nested empty", `a:2:{s:1:"a";a:0:{}s:1:"b";N;}`, arr("a", NewArray(), "b", nil)},
	{"negative int key", `a:1:{i:-5;s:1:"x";}`, arr(int64(-5), "x")},
}

func TestUnserializeVectors(t *testing.T) {
	for _, tc := range serializeVectors {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unserialize(tc.php)
			if err != nil {
				t.Fatalf("Unserialize(%q): %v", tc.php, err)
			}
			if !equalPHP(got, tc.want) {
				t.Fatalf("Unserialize(%q) = %#v, want %#v", tc.php, got, tc.want)
			}
			out, err := Serialize(got)
			if err != nil {
				t.Fatalf("Serialize: %v", err)
			}
			if out != tc.php {
				t.Fatalf("Serialize = %q, want PHP's %q", out, tc.php)
			}
		})
	}
}

// PHP's unserialize accepts some forms serialize never writes; the keys of
// arrays follow PHP's numeric-string rule.
func TestUnserializePHPForms(t *testing.T) {
	tests := []struct {
		name, in string
		want     any
		reser    string
	}{
		{"plus sign int", "i:+5;", int64(5), "i:5;"},
		{"exponent float", "d:1e5;", 100000.0, "d:100000;"},
		{"leading dot float", "d:.5;", 0.5, "d:0.5;"},
		{"numeric string key becomes int", `a:2:{s:1:"5";i:1;s:2:"05";i:2;}`, arr(int64(5), int64(1), "05", int64(2)), `a:2:{i:5;i:1;s:2:"05";i:2;}`},
		{"duplicate key keeps position, last value", `a:2:{i:1;i:1;i:1;i:2;}`, arr(int64(1), int64(2)), `a:1:{i:1;i:2;}`},
		{"-0 string key stays string", `a:1:{s:2:"-0";b:1;}`, arr("-0", true), `a:1:{s:2:"-0";b:1;}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Unserialize(tc.in)
			if err != nil {
				t.Fatalf("Unserialize(%q): %v", tc.in, err)
			}
			if !equalPHP(got, tc.want) {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
			if out, _ := Serialize(got); out != tc.reser {
				t.Fatalf("Serialize = %q, want %q", out, tc.reser)
			}
		})
	}
}

func TestUnserializeRejects(t *testing.T) {
	for _, in := range []string{
		"", "N", "b:2;", "b:1", "i:;", "i:1.5;", "i:99999999999999999999;", "d:abc;", "d:1e;",
		`s:5:"abc";`, `s:1:"ab";`, `s:-1:"";`, `s:1:"a"`, `a:1:{i:0;i:1;`, `a:2:{i:0;i:1;}`,
		`a:1:{b:1;i:1;}`, `a:1:{d:1.5;i:1;}`, `a:-1:{}`, `a:99999999:{}`,
		`O:8:"stdClass":0:{}`, `a:1:{i:0;O:8:"stdClass":0:{}}`, "r:1;", "R:1;", `S:1:"a";`,
		`E:7:"Foo:Bar";`, `C:3:"Foo":0:{}`, "x:1;", `s:1:"a";junk`, "a:1:{i:0;i:1;};",
		strings.Repeat("a:1:{i:0;", 600) + "N;" + strings.Repeat("}", 600),
	} {
		if v, err := Unserialize(in); err == nil {
			t.Errorf("Unserialize(%q) = %#v, want an error", in, v)
		} else if !errors.Is(err, ErrUnserialize) {
			t.Errorf("Unserialize(%q) error %v does not wrap ErrUnserialize", in, err)
		}
	}
}

func TestIsSerialized(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"N;", true},
		{"  N;\n", true},
		{"b:1;", true},
		{"i:5;", true},
		{"d:0.5;", true},
		{"d:1.0E+25;", true},
		{"d:INF;", false}, // WordPress's pattern has no letters but E
		{"d:NAN;", false},
		{`s:1:"a";`, true},
		{`s:1:"a"`, false},
		{`s:x:"a";`, false},
		{"a:0:{}", true},
		{`a:1:{i:0;i:1;}`, true},
		{`O:8:"stdClass":0:{}`, true},
		{"1", false},
		{"", false},
		{"yes", false},
		{"i:5", false},
		{"i:a;", false},
		{"x:1;", false},
		{"a:{}", false},
		{"http://example.com", false},
	}
	for _, tc := range tests {
		if got := IsSerialized(tc.in); got != tc.want {
			t.Errorf("IsSerialized(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestMaybeUnserialize(t *testing.T) {
	tests := []struct {
		name, in string
		want     any
	}{
		{"plain", "1", "1"},
		{"url", "https://example.com", "https://example.com"},
		{"serialized int", "i:5;", int64(5)},
		{"trimmed", " \nb:1;\t", true},
		{"broken serialized is false", `s:5:"abc";`, false},
		{"object is false", `O:8:"stdClass":0:{}`, false},
		{"INF stays a string", "d:INF;", "d:INF;"},
		{"array", `a:1:{s:1:"k";s:1:"v";}`, arr("k", "v")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MaybeUnserialize(tc.in); !equalPHP(got, tc.want) {
				t.Fatalf("MaybeUnserialize(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

func TestTruthy(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {int64(0), false}, {int64(-1), true},
		{0.0, false}, {0.5, true}, {"", false}, {"0", false}, {"00", true}, {"0.0", true},
		{"1", true}, {"yes", true}, {NewArray(), false}, {arr(0, false), true}, {math.NaN(), true},
	}
	for _, tc := range tests {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestArrayAppendAndSet(t *testing.T) {
	a := NewArray()
	a.Append("x")                // key 0
	_ = a.Set(int64(5), "y")     // key 5
	a.Append("z")                // key 6
	_ = a.Set("6", "replaced")   // "6" is the int key 6
	_ = a.Set("name", "n")       // string key
	_ = a.Set(int64(0), "first") // replaced in place
	got, _ := Serialize(a)
	want := `a:4:{i:0;s:5:"first";i:5;s:1:"y";i:6;s:8:"replaced";s:4:"name";s:1:"n";}`
	if got != want {
		t.Fatalf("Serialize = %q, want %q", got, want)
	}
	if err := a.Set(1.5, "x"); err == nil {
		t.Fatal("Set with a float key succeeded")
	}
}

// TestSerializeMatchesPHP has PHP unserialize what Go serialized and
// serialize it again: the bytes must be identical, and PHP must read the
// same structure back (checked through var_export).
func TestSerializeMatchesPHP(t *testing.T) {
	php := requirePHP(t)
	values := []any{
		arr("uuid", "u", "app_id", "", "created", int64(1), "last_used", nil, "last_ip", nil),
		arr(0, 0.1, 1, 1e25, 2, math.Copysign(0, -1), 3, 1e-7, 4, 123456789.125, 5, math.Inf(1), 6, 1e16, 7, 1e17),
		arr("héloïse", "mb\x00yte", "5", true, "-7", false, "07", int64(-9223372036854775807)),
		arr("nested", arr("a", arr("b", NewArray()))),
	}
	for _, v := range values {
		ser, err := Serialize(v)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(php, "-r", `echo serialize(unserialize(stream_get_contents(STDIN)));`)
		cmd.Stdin = strings.NewReader(ser)
		got, err := cmd.Output()
		if err != nil {
			t.Fatalf("php: %v", err)
		}
		if string(got) != ser {
			t.Errorf("PHP re-serialized\n%q\nas\n%q", ser, got)
		}
	}
}

// requirePHP returns the php binary or skips the test.
func requirePHP(t *testing.T) string {
	t.Helper()
	return testenv.PHP(t)
}

func FuzzUnserialize(f *testing.F) {
	for _, tc := range serializeVectors {
		f.Add(tc.php)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := Unserialize(in)
		_ = IsSerialized(in)
		_ = MaybeUnserialize(in)
		if err != nil {
			return
		}
		out, err := Serialize(v)
		if err != nil {
			t.Fatalf("Serialize of accepted %q: %v", in, err)
		}
		v2, err := Unserialize(out)
		if err != nil {
			t.Fatalf("Unserialize(Serialize(%q)) = %q: %v", in, out, err)
		}
		if !equalPHP(v, v2) {
			t.Fatalf("round trip of %q changed the value: %#v vs %#v", in, v, v2)
		}
		out2, _ := Serialize(v2)
		if out2 != out {
			t.Fatalf("serialization not stable: %q then %q", out, out2)
		}
	})
}
