package wpconfig

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// evalError is an expression the reader cannot evaluate without executing
// PHP; the statement holding it is skipped with a warning.
type evalError struct {
	line int
	msg  string
}

func (e *evalError) Error() string { return e.msg }

// stopError ends the reading: the require of wp-settings.php.
type stopError struct{ line int }

func (e *stopError) Error() string { return "wp-settings.php is loaded" }

// interp reads statements and evaluates the expressions that define
// constants, with PHP semantics for the subset a wp-config.php uses.
type interp struct {
	toks   []token
	pos    int
	file   *File
	getenv func(string) (string, bool)
	path   string // absolute path of the file, "" when unknown
	vars   map[string]Value
	marker int // line of the stop-editing comment
	// skipping is set while parsing a branch that is not taken: the
	// expressions are parsed but have no effect.
	skipping bool
	// depth counts nested statements and unary operands, to refuse input
	// nested deeper than any configuration file (and than the stack).
	depth int
}

// maxDepth bounds nesting of blocks, parentheses and unary operators.
const maxDepth = 200

func (in *interp) peek() token { return in.toks[in.pos] }

func (in *interp) peekAt(n int) token {
	if in.pos+n < len(in.toks) {
		return in.toks[in.pos+n]
	}
	return in.toks[len(in.toks)-1]
}

func (in *interp) nextTok() token {
	t := in.toks[in.pos]
	if t.kind != tkEOF {
		in.pos++
	}
	return t
}

func (in *interp) isOp(text string) bool {
	t := in.peek()
	return t.kind == tkOp && t.text == text
}

func (in *interp) isKeyword(word string) bool {
	t := in.peek()
	return t.kind == tkIdent && strings.EqualFold(t.text, word)
}

func (in *interp) expectOp(text string) error {
	t := in.nextTok()
	if t.kind != tkOp || t.text != text {
		return in.errAt(t, "expected %q, found %s", text, describe(t))
	}
	return nil
}

func (in *interp) errAt(t token, format string, args ...any) *evalError {
	return &evalError{line: t.line, msg: fmt.Sprintf(format, args...)}
}

func (in *interp) warn(line int, format string, args ...any) {
	if in.skipping {
		return // a branch PHP does not take cannot fail
	}
	in.file.Warnings = append(in.file.Warnings, Warning{Line: line, Message: fmt.Sprintf(format, args...)})
}

func describe(t token) string {
	switch t.kind {
	case tkEOF:
		return "end of file"
	case tkIdent:
		return "'" + t.text + "'"
	case tkVar:
		return "'$" + t.text + "'"
	case tkString, tkDQString:
		return "a string"
	case tkNumber:
		return "a number"
	case tkCast:
		return "a (" + t.text + ") cast"
	case tkBad:
		return t.text
	}
	return "'" + t.text + "'"
}

// run reads statements until the end of the file or the require of
// wp-settings.php, then scans what follows for defines to warn about.
func (in *interp) run() {
	for in.peek().kind != tkEOF {
		if err := in.statement(); err != nil {
			if stop, ok := err.(*stopError); ok {
				in.file.StopLine = stop.line
				in.afterStop()
				return
			}
			in.warn(errLine(err), "%v; statement skipped", err)
			in.recover()
		}
	}
}

func errLine(err error) int {
	if e, ok := err.(*evalError); ok {
		return e.line
	}
	return 0
}

// recover skips to the end of the broken statement: the next ';' or
// block at nesting depth 0.
func (in *interp) recover() {
	depth := 0
	for {
		t := in.nextTok()
		if t.kind == tkEOF {
			return
		}
		if t.kind != tkOp {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]":
			depth--
		case "}":
			depth--
			if depth <= 0 {
				return
			}
		case ";":
			if depth <= 0 {
				return
			}
		}
	}
}

// afterStop warns about each define that follows the require of
// wp-settings.php: WordPress has booted by then, so it is not read.
func (in *interp) afterStop() {
	for in.peek().kind != tkEOF {
		t := in.nextTok()
		if t.kind == tkIdent && strings.EqualFold(t.text, "define") && in.isOp("(") && in.peekAt(1).kind == tkString {
			in.warn(t.line, "%s is defined after wp-settings.php is loaded; it is not read", in.peekAt(1).val.Str)
		}
	}
}

func (in *interp) statement() error {
	t := in.peek()
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > maxDepth {
		in.nextTok()
		return in.errAt(t, "statements nested too deeply")
	}
	switch {
	case t.kind == tkOp && t.text == ";":
		in.nextTok()
		return nil
	case t.kind == tkOp && t.text == "{":
		in.nextTok()
		return in.block("}")
	case t.kind == tkBad:
		in.nextTok()
		return in.errAt(t, "cannot read %s", t.text)
	case t.kind == tkIdent:
		switch strings.ToLower(t.text) {
		case "if":
			return in.ifStatement()
		case "require", "require_once", "include", "include_once":
			return in.include()
		case "const":
			return in.constStatement()
		case "function":
			return in.skipFunction()
		case "namespace", "use", "declare", "global", "static":
			in.nextTok()
			in.recover()
			return nil
		case "echo", "print", "unset", "return", "exit", "die", "eval", "class", "foreach", "for", "while", "switch", "try", "do":
			in.nextTok()
			return in.errAt(t, "'%s' is not evaluated", t.text)
		}
	}
	_, err := in.expr()
	if err != nil {
		return err
	}
	if in.peek().kind == tkEOF {
		return nil
	}
	return in.expectOp(";")
}

// block reads statements up to the closing token.
func (in *interp) block(closer string) error {
	for {
		t := in.peek()
		if t.kind == tkEOF {
			return in.errAt(t, "missing %q", closer)
		}
		if t.kind == tkOp && t.text == closer || t.kind == tkIdent && strings.EqualFold(t.text, closer) {
			in.nextTok()
			return nil
		}
		if err := in.statementOrSkip(); err != nil {
			return err
		}
	}
}

// statementOrSkip reads one statement. One that fails is skipped with a
// warning; only the end of the read part of the file (a stopError) is
// returned.
func (in *interp) statementOrSkip() error {
	if err := in.statement(); err != nil {
		if _, stop := err.(*stopError); stop {
			return err
		}
		in.warn(errLine(err), "%v; statement skipped", err)
		in.recover()
	}
	return nil
}

// ifStatement reads if/elseif/else with braces, single statements or the
// alternative syntax (if (...): ... endif;). Only the branch PHP would
// take is evaluated; a condition the reader cannot evaluate skips every
// branch with a warning.
func (in *interp) ifStatement() error {
	in.nextTok() // if
	taken := false
	unknown := false
	wasSkipping := in.skipping
	defer func() { in.skipping = wasSkipping }()
	first := true
	for {
		var cond bool
		if first || in.isKeyword("elseif") || in.isKeyword("else") && in.peekAt(1).kind == tkIdent && strings.EqualFold(in.peekAt(1).text, "if") {
			if !first {
				if in.isKeyword("else") {
					in.nextTok()
				}
				in.nextTok()
			}
			first = false
			if err := in.expectOp("("); err != nil {
				return err
			}
			open := in.pos
			in.skipping = wasSkipping || taken || unknown
			v, err := in.expr()
			if err == nil {
				err = in.expectOp(")")
			}
			if err != nil {
				ee, ok := err.(*evalError)
				if !ok {
					return err
				}
				in.warn(ee.line, "cannot evaluate the condition of this if (%s); its branches are not read", ee.msg)
				unknown = true
				in.skipping = true
				in.pos = open
				if err := in.skipTo(")"); err != nil {
					return err
				}
			}
			cond = !in.skipping && v.Truthy()
		} else if in.isKeyword("else") {
			in.nextTok()
			cond = !taken && !unknown
		} else {
			return nil
		}
		in.skipping = wasSkipping || !cond
		if cond {
			taken = true
		}
		if in.isOp(":") {
			in.nextTok()
			if err := in.altBlock(); err != nil {
				return err
			}
			if in.isKeyword("endif") {
				in.nextTok()
				if in.isOp(";") {
					in.nextTok()
				}
				return nil
			}
			continue
		}
		if err := in.statementOrSkip(); err != nil {
			return err
		}
	}
}

// altBlock reads statements up to elseif, else or endif.
func (in *interp) altBlock() error {
	for {
		t := in.peek()
		if t.kind == tkEOF {
			return in.errAt(t, "missing endif")
		}
		if in.isKeyword("elseif") || in.isKeyword("else") || in.isKeyword("endif") {
			return nil
		}
		if err := in.statementOrSkip(); err != nil {
			return err
		}
	}
}

// skipTo skips tokens up to and including the closer at depth 0.
func (in *interp) skipTo(closer string) error {
	depth := 0
	for {
		t := in.nextTok()
		if t.kind == tkEOF {
			return in.errAt(t, "missing %q", closer)
		}
		if t.kind != tkOp {
			continue
		}
		switch {
		case t.text == closer && depth == 0:
			return nil
		case t.text == "(" || t.text == "[" || t.text == "{":
			depth++
		case t.text == ")" || t.text == "]" || t.text == "}":
			depth--
		}
	}
}

// skipFunction skips a function declaration: its signature and body.
func (in *interp) skipFunction() error {
	in.nextTok()
	for !in.isOp("{") {
		if in.peek().kind == tkEOF {
			return in.errAt(in.peek(), "missing function body")
		}
		in.nextTok()
	}
	in.nextTok()
	return in.skipTo("}")
}

// include handles require/include: the require of wp-settings.php ends the
// part of the file that is read; any other file is not followed.
func (in *interp) include() error {
	kw := in.nextTok()
	var last token
	depth := 0
	for {
		t := in.peek()
		if t.kind == tkEOF || depth == 0 && t.kind == tkOp && t.text == ";" {
			break
		}
		if t.kind == tkOp && t.text == "(" {
			depth++
		}
		if t.kind == tkOp && t.text == ")" {
			depth--
		}
		if t.kind == tkString || t.kind == tkDQString {
			last = t
		}
		in.nextTok()
	}
	in.nextTok()
	lit := last.val.Str
	if last.kind == tkDQString {
		lit = last.text
	}
	if strings.HasSuffix(lit, "wp-settings.php") {
		return &stopError{line: kw.line}
	}
	if !in.skipping {
		in.warn(kw.line, "%s of another file is not followed; constants it defines are not read", kw.text)
	}
	return nil
}

// constStatement handles `const NAME = value, NAME2 = value;`.
func (in *interp) constStatement() error {
	in.nextTok()
	for {
		name := in.nextTok()
		if name.kind != tkIdent {
			return in.errAt(name, "expected a constant name, found %s", describe(name))
		}
		if err := in.expectOp("="); err != nil {
			return err
		}
		v, err := in.expr()
		if err != nil {
			return err
		}
		in.define(name.text, v, name.line)
		if !in.isOp(",") {
			break
		}
		in.nextTok()
	}
	return in.expectOp(";")
}

// define records a constant unless it is already defined (PHP keeps the
// first definition and warns).
func (in *interp) define(name string, v Value, line int) bool {
	if in.skipping {
		return true
	}
	if prev, ok := in.file.Defines[name]; ok {
		in.warn(line, "%s is already defined on line %d; PHP keeps the first value", name, prev.Line)
		return false
	}
	v.Line = line
	in.file.Defines[name] = v
	in.file.Order = append(in.file.Order, name)
	if in.marker > 0 && line > in.marker && (strings.HasPrefix(name, "MAILSVC_") || strings.HasPrefix(name, "MAIL_SVC_")) {
		in.warn(line, "%s is defined below the \"stop editing\" line; it is read, but belongs above it", name)
	}
	return true
}

// Expression parsing and evaluation, PHP precedence from lowest:
// or, xor, and, assignment, ternary, ??, ||, &&, equality, comparison,
// '.', + -, * / %, unary, primary.

func (in *interp) expr() (Value, error) { return in.lowOr() }

func (in *interp) lowOr() (Value, error) { return in.leftAssoc(&lowOrLevel, in.lowAnd) }

func (in *interp) lowAnd() (Value, error) { return in.leftAssoc(&lowAndLevel, in.assignment) }

// shortCircuit parses the right operand, evaluating it only when skip is
// false (PHP does not evaluate it otherwise, so its defines do not run).
func (in *interp) shortCircuit(skip bool, operand func() (Value, error)) (Value, error) {
	was := in.skipping
	in.skipping = was || skip
	defer func() { in.skipping = was }()
	return operand()
}

func (in *interp) assignment() (Value, error) {
	if in.peek().kind == tkVar {
		next := in.peekAt(1)
		if next.kind == tkOp && (next.text == "=" || next.text == ".=" || next.text == "??=") {
			name := in.nextTok()
			op := in.nextTok().text
			v, err := in.assignment()
			if err != nil {
				return v, err
			}
			if !in.skipping {
				cur, set := in.vars[name.text]
				switch op {
				case ".=":
					v = strVal(cur.String() + v.String())
				case "??=":
					if set && cur.Kind != Null {
						v = cur
					}
				}
				v.Line = name.line
				in.vars[name.text] = v
				if name.text == "table_prefix" {
					in.file.TablePrefix = v.String()
					in.file.TablePrefixLine = name.line
				}
			}
			return v, nil
		}
	}
	return in.ternary()
}

func (in *interp) ternary() (Value, error) {
	cond, err := in.coalesce()
	if err != nil {
		return cond, err
	}
	for in.isOp("?") || in.isOp("?:") {
		if in.nextTok().text == "?:" {
			r, err := in.shortCircuit(cond.Truthy(), in.coalesce)
			if err != nil {
				return r, err
			}
			if !cond.Truthy() {
				cond = r
			}
			continue
		}
		a, err := in.shortCircuit(!cond.Truthy(), in.assignment)
		if err != nil {
			return a, err
		}
		if err := in.expectOp(":"); err != nil {
			return a, err
		}
		b, err := in.shortCircuit(cond.Truthy(), in.assignment)
		if err != nil {
			return b, err
		}
		if cond.Truthy() {
			cond = a
		} else {
			cond = b
		}
	}
	return cond, nil
}

func (in *interp) coalesce() (Value, error) {
	l, err := in.logicalOr()
	if err != nil {
		return l, err
	}
	if in.isOp("??") {
		in.nextTok()
		r, err := in.shortCircuit(l.Kind != Null, in.coalesce)
		if err != nil {
			return r, err
		}
		if l.Kind == Null {
			return r, nil
		}
	}
	return l, nil
}

func (in *interp) logicalOr() (Value, error) { return in.leftAssoc(&orLevel, in.logicalAnd) }

func (in *interp) logicalAnd() (Value, error) { return in.leftAssoc(&andLevel, in.equality) }

func (in *interp) equality() (Value, error) { return in.leftAssoc(&equalityLevel, in.comparison) }

func (in *interp) comparison() (Value, error) { return in.leftAssoc(&comparisonLevel, in.concat) }

func (in *interp) concat() (Value, error) { return in.leftAssoc(&concatLevel, in.additive) }

func (in *interp) additive() (Value, error) { return in.leftAssoc(&additiveLevel, in.multiplicative) }

func (in *interp) multiplicative() (Value, error) {
	return in.leftAssoc(&multiplicativeLevel, in.unary)
}

// level is one left-associative binary level of the grammar: its
// operators (keywords, matched in any case, when keyword), whether the
// right operand of op goes unevaluated after l (PHP's short circuit; nil:
// never), and how op joins its operands.
type level struct {
	ops     []string
	keyword bool
	skip    func(op string, l Value) bool
	join    func(in *interp, op token, l, r Value) (Value, error)
}

// The binary levels. A keyword operator's text is given in lower case.
var (
	lowOrLevel = level{ops: []string{"or", "xor"}, keyword: true,
		skip: func(op string, l Value) bool { return op == "or" && l.Truthy() },
		join: func(_ *interp, op token, l, r Value) (Value, error) {
			if op.text == "or" {
				return boolVal(l.Truthy() || r.Truthy()), nil
			}
			return boolVal(l.Truthy() != r.Truthy()), nil
		}}
	lowAndLevel = level{ops: []string{"and"}, keyword: true, skip: skipAnd, join: joinAnd}
	orLevel     = level{ops: []string{"||"}, skip: func(_ string, l Value) bool { return l.Truthy() },
		join: func(_ *interp, _ token, l, r Value) (Value, error) { return boolVal(l.Truthy() || r.Truthy()), nil }}
	andLevel      = level{ops: []string{"&&"}, skip: skipAnd, join: joinAnd}
	equalityLevel = level{ops: []string{"==", "!=", "<>", "===", "!=="},
		join: func(_ *interp, op token, l, r Value) (Value, error) {
			switch op.text {
			case "==":
				return boolVal(looseEqual(l, r)), nil
			case "!=", "<>":
				return boolVal(!looseEqual(l, r)), nil
			case "===":
				return boolVal(strictEqual(l, r)), nil
			}
			return boolVal(!strictEqual(l, r)), nil
		}}
	comparisonLevel = level{ops: []string{"<", ">", "<=", ">="},
		join: func(_ *interp, op token, l, r Value) (Value, error) {
			c := compare(l, r)
			switch op.text {
			case "<":
				return boolVal(c < 0), nil
			case ">":
				return boolVal(c > 0), nil
			case "<=":
				return boolVal(c <= 0), nil
			}
			return boolVal(c >= 0), nil
		}}
	concatLevel = level{ops: []string{"."},
		join: func(_ *interp, _ token, l, r Value) (Value, error) { return strVal(l.String() + r.String()), nil }}
	additiveLevel       = level{ops: []string{"+", "-"}, join: (*interp).arith}
	multiplicativeLevel = level{ops: []string{"*", "/", "%"}, join: (*interp).arith}
)

func skipAnd(_ string, l Value) bool { return !l.Truthy() }

func joinAnd(_ *interp, _ token, l, r Value) (Value, error) {
	return boolVal(l.Truthy() && r.Truthy()), nil
}

// atOp reports whether the next token is one of lv's operators.
func (in *interp) atOp(lv *level) bool {
	for _, op := range lv.ops {
		if lv.keyword && in.isKeyword(op) || !lv.keyword && in.isOp(op) {
			return true
		}
	}
	return false
}

// leftAssoc parses a level: operands by operand, joined left to right by
// the level's operators.
func (in *interp) leftAssoc(lv *level, operand func() (Value, error)) (Value, error) {
	l, err := operand()
	if err != nil {
		return l, err
	}
	for in.atOp(lv) {
		op := in.nextTok()
		if lv.keyword {
			op.text = strings.ToLower(op.text)
		}
		var r Value
		if lv.skip != nil {
			r, err = in.shortCircuit(lv.skip(op.text, l), operand)
		} else {
			r, err = operand()
		}
		if err != nil {
			return r, err
		}
		if l, err = lv.join(in, op, l, r); err != nil {
			return l, err
		}
	}
	return l, nil
}

// arith applies + - * / % with PHP's int/float rules: int results that
// overflow become floats; / gives an int only when exact.
func (in *interp) arith(op token, a, b Value) (Value, error) {
	if in.skipping {
		return nullVal, nil
	}
	x, okx := toNumber(a)
	y, oky := toNumber(b)
	if !okx || !oky {
		return nullVal, in.errAt(op, "unsupported operand types for %s (PHP 8 throws a TypeError)", op.text)
	}
	if x.Kind == Int && y.Kind == Int {
		p, q := x.Int, y.Int
		switch op.text {
		case "+":
			if s := p + q; (s > p) == (q > 0) {
				return intVal(s), nil
			}
		case "-":
			if s := p - q; (s < p) == (q > 0) {
				return intVal(s), nil
			}
		case "*":
			if p == 0 || q == 0 {
				return intVal(0), nil
			}
			if s := p * q; s/q == p && !(p == -1 && q == math.MinInt64) && !(q == -1 && p == math.MinInt64) {
				return intVal(s), nil
			}
		case "/":
			if q == 0 {
				return nullVal, in.errAt(op, "division by zero")
			}
			if p%q == 0 && !(p == math.MinInt64 && q == -1) {
				return intVal(p / q), nil
			}
		case "%":
			if q == 0 {
				return nullVal, in.errAt(op, "modulo by zero")
			}
			if q == -1 {
				return intVal(0), nil
			}
			return intVal(p % q), nil
		}
	}
	f, g := asFloat(x), asFloat(y)
	switch op.text {
	case "+":
		return floatVal(f + g), nil
	case "-":
		return floatVal(f - g), nil
	case "*":
		return floatVal(f * g), nil
	case "/":
		if g == 0 {
			return nullVal, in.errAt(op, "division by zero")
		}
		return floatVal(f / g), nil
	}
	// % works on integers.
	p, q := toInt(x), toInt(y)
	if q == 0 {
		return nullVal, in.errAt(op, "modulo by zero")
	}
	if q == -1 {
		return intVal(0), nil
	}
	return intVal(p % q), nil
}

func (in *interp) unary() (Value, error) {
	t := in.peek()
	in.depth++
	defer func() { in.depth-- }()
	if in.depth > maxDepth {
		in.nextTok()
		return nullVal, in.errAt(t, "expression nested too deeply")
	}
	switch {
	case t.kind == tkOp && t.text == "!":
		in.nextTok()
		v, err := in.unary()
		return boolVal(!v.Truthy()), err
	case t.kind == tkOp && t.text == "@":
		in.nextTok()
		return in.unary()
	case t.kind == tkOp && (t.text == "-" || t.text == "+"):
		in.nextTok()
		v, err := in.unary()
		if err != nil || t.text == "+" {
			if err == nil && !in.skipping {
				v, _ = toNumber(v)
			}
			return v, err
		}
		if in.skipping {
			return nullVal, nil
		}
		n, ok := toNumber(v)
		if !ok {
			return nullVal, in.errAt(t, "unsupported operand type for unary -")
		}
		if n.Kind == Int && n.Int != math.MinInt64 {
			return intVal(-n.Int), nil
		}
		return floatVal(-asFloat(n)), nil
	case t.kind == tkCast:
		in.nextTok()
		v, err := in.unary()
		if err != nil {
			return v, err
		}
		return castTo(t.text, v), nil
	}
	return in.primary()
}

func castTo(typ string, v Value) Value {
	switch typ {
	case "int":
		return intVal(toInt(v))
	case "bool":
		return boolVal(v.Truthy())
	case "string":
		return strVal(v.String())
	case "float":
		if v.Kind == String {
			if n, ok := isNumeric(v.Str); ok {
				return floatVal(asFloat(n))
			}
			return floatVal(float64(toInt(v)))
		}
		n, _ := toNumber(v)
		return floatVal(asFloat(n))
	}
	return v
}

func (in *interp) primary() (Value, error) {
	if t := in.peek(); t.kind == tkOp && (t.text == ";" || t.text == "}" || t.text == ")") || t.kind == tkEOF {
		return nullVal, in.errAt(t, "expected a value, found %s", describe(t))
	}
	t := in.nextTok()
	switch t.kind {
	case tkString, tkNumber:
		return t.val, nil
	case tkDQString:
		return in.interpolate(t)
	case tkVar:
		return in.variable(t)
	case tkBad:
		return nullVal, in.errAt(t, "cannot read %s", t.text)
	case tkOp:
		if t.text == "(" {
			v, err := in.expr()
			if err != nil {
				return v, err
			}
			return v, in.expectOp(")")
		}
		return nullVal, in.errAt(t, "unexpected %s", describe(t))
	case tkIdent:
		if in.isOp("(") {
			return in.call(t)
		}
		return in.constant(t)
	}
	return nullVal, in.errAt(t, "unexpected %s", describe(t))
}

// variable reads $name, $name['key'] for the superglobals $_ENV and
// $_SERVER (read from the environment), and other known variables.
func (in *interp) variable(t token) (Value, error) {
	if in.isOp("[") {
		key, err := in.superglobalKey(t)
		if err != nil || in.skipping {
			return nullVal, err
		}
		if v, ok := in.env(key); ok {
			return strVal(v), nil
		}
		return nullVal, nil
	}
	if in.skipping {
		return nullVal, nil
	}
	v, ok := in.vars[t.text]
	if !ok {
		return nullVal, in.errAt(t, "variable $%s is not defined before this line", t.text)
	}
	return v, nil
}

// superglobalKey reads the [key] after the variable t, which must be
// $_ENV or $_SERVER (no other array variable is read), and returns the key.
func (in *interp) superglobalKey(t token) (string, error) {
	in.nextTok() // [
	key, err := in.expr()
	if err != nil {
		return "", err
	}
	if err := in.expectOp("]"); err != nil {
		return "", err
	}
	if t.text != "_ENV" && t.text != "_SERVER" {
		return "", in.errAt(t, "array variable $%s is not supported", t.text)
	}
	return key.String(), nil
}

func (in *interp) env(name string) (string, bool) {
	if in.getenv == nil {
		return "", false
	}
	return in.getenv(name)
}

// constant resolves a bare name: true/false/null, magic constants, a few
// PHP constants, or a constant defined earlier in the file.
func (in *interp) constant(t token) (Value, error) {
	switch strings.ToLower(t.text) {
	case "true":
		return boolVal(true), nil
	case "false":
		return boolVal(false), nil
	case "null":
		return nullVal, nil
	}
	switch t.text {
	case "__LINE__":
		return intVal(int64(t.line)), nil
	case "__DIR__", "__FILE__":
		if in.path == "" {
			return nullVal, in.errAt(t, "%s is unknown when the file's path is not given", t.text)
		}
		if t.text == "__DIR__" {
			return strVal(filepath.Dir(in.path)), nil
		}
		return strVal(in.path), nil
	case "PHP_EOL":
		return strVal("\n"), nil
	case "DIRECTORY_SEPARATOR":
		return strVal("/"), nil
	case "PHP_INT_MAX":
		return intVal(math.MaxInt64), nil
	case "PHP_INT_MIN":
		return intVal(math.MinInt64), nil
	case "FILTER_VALIDATE_INT":
		return intVal(257), nil
	case "FILTER_VALIDATE_BOOLEAN", "FILTER_VALIDATE_BOOL":
		return intVal(258), nil
	case "FILTER_NULL_ON_FAILURE":
		return intVal(134217728), nil
	}
	if in.skipping {
		return nullVal, nil
	}
	if v, ok := in.file.Defines[t.text]; ok {
		return v, nil
	}
	return nullVal, in.errAt(t, "constant %s is not defined before this line", t.text)
}

// args reads a call's arguments after the opening parenthesis.
func (in *interp) args() ([]Value, error) {
	in.nextTok() // (
	var out []Value
	if in.isOp(")") {
		in.nextTok()
		return out, nil
	}
	for {
		v, err := in.expr()
		if err != nil {
			return out, err
		}
		out = append(out, v)
		if in.isOp(",") {
			in.nextTok()
			if in.isOp(")") { // trailing comma
				in.nextTok()
				return out, nil
			}
			continue
		}
		return out, in.expectOp(")")
	}
}

// sideEffectOnly are functions whose calls a wp-config.php makes for their
// effect on PHP itself; they define nothing and are ignored.
var sideEffectOnly = map[string]bool{
	"ini_set": true, "error_reporting": true, "set_time_limit": true, "date_default_timezone_set": true,
	"header": true, "ini_get": true, "setlocale": true, "ob_start": true,
}

func (in *interp) call(name token) (Value, error) {
	fn := strings.ToLower(name.text)
	if fn == "isset" || fn == "empty" {
		return in.issetOrEmpty(name, fn)
	}
	if sideEffectOnly[fn] {
		in.nextTok() // (
		return nullVal, in.skipTo(")")
	}
	args, err := in.args()
	if err != nil {
		return nullVal, err
	}
	if in.skipping {
		return nullVal, nil
	}
	need := func(n int) error {
		if len(args) < n {
			return in.errAt(name, "%s() needs %d argument(s)", name.text, n)
		}
		return nil
	}
	if f, ok := oneArgFuncs[fn]; ok {
		if err := need(1); err != nil {
			return nullVal, err
		}
		return f(args[0]), nil
	}
	switch fn {
	case "define":
		if err := need(2); err != nil {
			return nullVal, err
		}
		if args[0].Kind != String || args[0].Str == "" {
			return nullVal, in.errAt(name, "define() needs a constant name string")
		}
		return boolVal(in.define(args[0].Str, args[1], name.line)), nil
	case "defined":
		if err := need(1); err != nil {
			return nullVal, err
		}
		_, ok := in.file.Defines[args[0].String()]
		return boolVal(ok), nil
	case "constant":
		if err := need(1); err != nil {
			return nullVal, err
		}
		if v, ok := in.file.Defines[args[0].String()]; ok {
			return v, nil
		}
		return nullVal, in.errAt(name, "constant %s is not defined before this line", args[0].String())
	case "getenv":
		if err := need(1); err != nil {
			return nullVal, err
		}
		if v, ok := in.env(args[0].String()); ok {
			return strVal(v), nil
		}
		return boolVal(false), nil
	case "getenv_docker":
		// The official Docker image's helper: NAME_FILE's contents, else
		// NAME, else the default.
		if err := need(2); err != nil {
			return nullVal, err
		}
		n := args[0].String()
		if p, ok := in.env(n + "_FILE"); ok && p != "" {
			b, err := os.ReadFile(p)
			if err != nil {
				return nullVal, in.errAt(name, "read %s_FILE: %v", n, err)
			}
			return strVal(strings.TrimRight(string(b), "\r\n")), nil
		}
		if v, ok := in.env(n); ok {
			return strVal(v), nil
		}
		return args[1], nil
	case "function_exists":
		return boolVal(false), nil
	case "dirname":
		if err := need(1); err != nil {
			return nullVal, err
		}
		levels := int64(1)
		if len(args) > 1 {
			levels = toInt(args[1])
		}
		p := args[0].String()
		for i := int64(0); i < levels && i < 64; i++ {
			p = filepath.Dir(p)
		}
		return strVal(p), nil
	case "trim", "rtrim", "ltrim", "chop":
		if err := need(1); err != nil {
			return nullVal, err
		}
		cut := " \t\n\r\x00\x0B"
		if len(args) > 1 {
			cut = args[1].String()
		}
		s := args[0].String()
		switch fn {
		case "trim":
			s = strings.Trim(s, cut)
		case "ltrim":
			s = strings.TrimLeft(s, cut)
		default:
			s = strings.TrimRight(s, cut)
		}
		return strVal(s), nil
	case "filter_var":
		return in.filterVar(name, args)
	}
	return nullVal, in.errAt(name, "function %s() is not evaluated", name.text)
}

// oneArgFuncs are the functions of one argument that call evaluates,
// each a conversion of its argument.
var oneArgFuncs = map[string]func(Value) Value{
	"strtolower": func(v Value) Value { return strVal(strings.ToLower(v.String())) },
	"strtoupper": func(v Value) Value { return strVal(strings.ToUpper(v.String())) },
	"intval":     func(v Value) Value { return castTo("int", v) },
	"boolval":    func(v Value) Value { return castTo("bool", v) },
	"strval":     func(v Value) Value { return castTo("string", v) },
	"floatval":   func(v Value) Value { return castTo("float", v) },
}

// filterVar supports filter_var with FILTER_VALIDATE_BOOLEAN and
// FILTER_VALIDATE_INT, which env-driven configs use on getenv().
func (in *interp) filterVar(name token, args []Value) (Value, error) {
	if len(args) < 2 {
		return nullVal, in.errAt(name, "filter_var() without a filter is not evaluated")
	}
	flags := int64(0)
	if len(args) > 2 {
		flags = toInt(args[2])
	}
	fail := boolVal(false)
	if flags&134217728 != 0 {
		fail = nullVal
	}
	s := strings.TrimSpace(args[0].String())
	switch toInt(args[1]) {
	case 258:
		switch strings.ToLower(s) {
		case "1", "true", "on", "yes":
			return boolVal(true), nil
		case "0", "false", "off", "no", "":
			if args[0].Kind == Bool || s != "" || flags&134217728 == 0 {
				return boolVal(false), nil
			}
		}
		return fail, nil
	case 257:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || strings.HasPrefix(s, "+0") || strings.HasPrefix(s, "-0") || len(s) > 1 && s[0] == '0' {
			return fail, nil
		}
		return intVal(n), nil
	}
	return nullVal, in.errAt(name, "filter_var() with this filter is not evaluated")
}

// issetOrEmpty handles isset($x, ...) and empty($x) without errors for
// undefined variables or constants.
func (in *interp) issetOrEmpty(name token, fn string) (Value, error) {
	in.nextTok() // (
	all := true
	anyTrue := false
	for {
		t := in.nextTok()
		if t.kind != tkVar {
			return nullVal, in.errAt(t, "%s() of %s is not supported", name.text, describe(t))
		}
		var v Value
		set := false
		if in.isOp("[") {
			key, err := in.superglobalKey(t)
			if err != nil {
				return nullVal, err
			}
			var s string
			s, set = in.env(key)
			v = strVal(s)
		} else {
			v, set = in.vars[t.text]
			set = set && v.Kind != Null
		}
		if !set {
			all = false
		}
		if set && v.Truthy() {
			anyTrue = true
		}
		if in.isOp(",") {
			in.nextTok()
			continue
		}
		if err := in.expectOp(")"); err != nil {
			return nullVal, err
		}
		break
	}
	if fn == "isset" {
		return boolVal(all), nil
	}
	return boolVal(!anyTrue), nil
}

// interpolate decodes a double-quoted string: PHP's escapes and simple
// variable interpolation ($name, {$name}, ${name}).
func (in *interp) interpolate(t token) (Value, error) {
	raw := t.text
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			n, adv := decodeEscape(raw[i+1:])
			b.WriteString(n)
			i += adv
		case c == '$' && i+1 < len(raw) && isIdentStart(raw[i+1]),
			c == '{' && i+2 < len(raw) && raw[i+1] == '$' && isIdentStart(raw[i+2]),
			c == '$' && i+2 < len(raw) && raw[i+1] == '{' && isIdentStart(raw[i+2]):
			braced := c == '{' || raw[i+1] == '{'
			j := i + 1
			if braced {
				j = i + 2
			}
			k := j
			for k < len(raw) && isIdentChar(raw[k]) {
				k++
			}
			name := raw[j:k]
			if braced {
				if k >= len(raw) || raw[k] != '}' {
					return nullVal, in.errAt(t, "complex interpolation in a double-quoted string is not supported")
				}
				k++
			}
			if in.skipping {
				i = k - 1
				continue
			}
			v, ok := in.vars[name]
			if !ok {
				return nullVal, in.errAt(t, "double-quoted string interpolates $%s, which is not defined before this line", name)
			}
			b.WriteString(v.String())
			i = k - 1
		default:
			b.WriteByte(c)
		}
	}
	v := strVal(b.String())
	v.Line = t.line
	return v, nil
}

// decodeEscape decodes the escape after a backslash in a double-quoted
// string; s starts after the backslash. It returns the text and how many
// bytes of s it used.
func decodeEscape(s string) (string, int) {
	switch s[0] {
	case 'n':
		return "\n", 1
	case 't':
		return "\t", 1
	case 'r':
		return "\r", 1
	case 'v':
		return "\v", 1
	case 'e':
		return "\x1b", 1
	case 'f':
		return "\f", 1
	case '\\':
		return "\\", 1
	case '$':
		return "$", 1
	case '"':
		return "\"", 1
	case 'x':
		j := 1
		for j < len(s) && j < 3 && digitValOK(s[j], 16) {
			j++
		}
		if j == 1 {
			return "\\x", 1
		}
		n, _ := strconv.ParseUint(s[1:j], 16, 8)
		return string([]byte{byte(n)}), j
	case 'u':
		if len(s) > 2 && s[1] == '{' {
			end := strings.IndexByte(s, '}')
			if end > 2 {
				if n, err := strconv.ParseUint(s[2:end], 16, 32); err == nil && n <= 0x10FFFF {
					return string(rune(n)), end + 1
				}
			}
		}
		return "\\u", 1
	}
	if s[0] >= '0' && s[0] <= '7' {
		j := 1
		for j < len(s) && j < 3 && s[j] >= '0' && s[j] <= '7' {
			j++
		}
		n, _ := strconv.ParseUint(s[:j], 8, 16)
		return string([]byte{byte(n)}), j
	}
	return "\\" + s[:1], 1
}

func digitValOK(c byte, base int) bool {
	switch {
	case c >= '0' && c <= '9':
		return int(c-'0') < base
	case c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
		return base == 16
	}
	return false
}
