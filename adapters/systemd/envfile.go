package systemd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// EnvFileName is the environment variable naming the environment file the
// command line reads (LoadEnv); unset means EnvPath, set and empty means
// none.
const EnvFileName = "MAILSVC_ENV_FILE"

// EnvLine is one assignment of an environment file.
type EnvLine struct {
	Key, Value string
	Line       int // 1-based line where the assignment starts
}

// EnvProblem is a line of an environment file that systemd would ignore.
type EnvProblem struct {
	Line    int
	Message string
}

func (p EnvProblem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Message) }

// ParseEnv reads text in systemd's EnvironmentFile= syntax: KEY=VALUE
// assignments, one a line; blank lines and lines starting with # or ; are
// comments; whitespace around the key and before the value is ignored. A
// value in double quotes may hold \" \\ \$ \` escapes and span lines; a
// value in single quotes is taken as it is and may span lines; an unquoted
// value loses its trailing whitespace, a backslash keeps the character
// after it, and a backslash at the end of the line joins the next one. A
// line without = or with a key that is not a variable name is a problem
// and skipped, as systemd skips it. Assignments are returned in order (a
// later one of the same key wins, as in systemd).
func ParseEnv(text string) ([]EnvLine, []EnvProblem) {
	var out []EnvLine
	var problems []EnvProblem
	p := envParser{s: text, line: 1}
	for !p.done() {
		start := p.line
		p.skipBlanks()
		if p.done() {
			break
		}
		switch p.peek() {
		case '\n':
			p.next()
			continue
		case '#', ';':
			p.skipLine()
			continue
		}
		key := strings.TrimRight(p.until("=\n"), " \t\r")
		if p.done() || p.peek() != '=' {
			problems = append(problems, EnvProblem{start, fmt.Sprintf("%q is not NAME=value", key)})
			p.skipLine()
			continue
		}
		p.next() // =
		value, err := p.value()
		if err != "" {
			problems = append(problems, EnvProblem{start, err})
			continue
		}
		if !validEnvName(key) {
			problems = append(problems, EnvProblem{start, fmt.Sprintf("%q is not a variable name", key)})
			continue
		}
		out = append(out, EnvLine{Key: key, Value: value, Line: start})
	}
	return out, problems
}

// envParser walks an environment file's text, counting lines.
type envParser struct {
	s    string
	i    int
	line int
}

func (p *envParser) done() bool { return p.i >= len(p.s) }
func (p *envParser) peek() byte { return p.s[p.i] }
func (p *envParser) next() byte {
	c := p.s[p.i]
	p.i++
	if c == '\n' {
		p.line++
	}
	return c
}

func (p *envParser) skipBlanks() {
	for !p.done() && strings.IndexByte(" \t\r\f\v", p.peek()) >= 0 {
		p.next()
	}
}

func (p *envParser) skipLine() {
	for !p.done() && p.next() != '\n' {
	}
}

// until returns the text up to (not including) one of stop, or the end.
func (p *envParser) until(stop string) string {
	start := p.i
	for !p.done() && strings.IndexByte(stop, p.peek()) < 0 {
		p.next()
	}
	return p.s[start:p.i]
}

// value reads a value after its =, through the end of its (last) line.
func (p *envParser) value() (string, string) {
	p.skipBlanks()
	var b strings.Builder
	if p.done() {
		return "", ""
	}
	switch q := p.peek(); q {
	case '"', '\'':
		start := p.line
		p.next()
		for {
			if p.done() {
				return "", fmt.Sprintf("the quote opened on line %d is not closed", start)
			}
			c := p.next()
			switch {
			case c == q:
				p.skipLine() // text after the closing quote is ignored
				return b.String(), ""
			case c == '\\' && q == '"' && !p.done():
				switch n := p.next(); n {
				case '"', '\\', '$', '`':
					b.WriteByte(n)
				case '\n': // a line continuation
				default:
					b.WriteByte('\\')
					b.WriteByte(n)
				}
			default:
				b.WriteByte(c)
			}
		}
	}
	for !p.done() {
		c := p.next()
		if c == '\n' {
			break
		}
		if c == '\\' && !p.done() {
			if n := p.next(); n != '\n' {
				b.WriteByte(n)
			}
			continue
		}
		b.WriteByte(c)
	}
	return strings.TrimRight(b.String(), " \t\r\f\v"), ""
}

// validEnvName reports whether name is a variable name: a letter or _,
// then letters, digits and _.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i, c := range name {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// readFile reads a file; tests replace it to see a file root may not read.
var readFile = os.ReadFile

// ErrEnvUnreadable is the error LoadEnv returns when the environment file
// exists but cannot be read (a command run without sudo).
var ErrEnvUnreadable = errors.New("the environment file cannot be read")

// LoadEnv reads the environment file that MAILSVC_ENV_FILE names (EnvPath
// when unset, none when set and empty) and sets each variable it assigns
// that the environment does not already hold: the environment wins, as a
// command run by hand should see what the service sees under systemd. It
// returns the file read ("" when none), the variables set and the file's
// problems. A missing file is no error; a file that exists but cannot be
// read wraps ErrEnvUnreadable.
func LoadEnv(lookup func(string) (string, bool), setenv func(string, string) error) (path string, set []string, problems []EnvProblem, err error) {
	path, ok := lookup(EnvFileName)
	if !ok {
		path = EnvPath
	}
	if path == "" {
		return "", nil, nil, nil
	}
	data, err := readFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", nil, nil, nil
	case errors.Is(err, fs.ErrPermission):
		return path, nil, nil, fmt.Errorf("%w: %s: permission denied: run the command with sudo (as the service reads it), or set %s= to read none", ErrEnvUnreadable, path, EnvFileName)
	case err != nil:
		return path, nil, nil, fmt.Errorf("read the environment file %s: %w", path, err)
	}
	lines, problems := ParseEnv(string(data))
	final := map[string]string{}
	var order []string
	for _, l := range lines {
		if _, seen := final[l.Key]; !seen {
			order = append(order, l.Key)
		}
		final[l.Key] = l.Value
	}
	for _, k := range order {
		if _, exists := lookup(k); exists {
			continue
		}
		if err := setenv(k, final[k]); err != nil {
			return path, set, problems, fmt.Errorf("set %s from %s: %w", k, path, err)
		}
		set = append(set, k)
	}
	return path, set, problems, nil
}
