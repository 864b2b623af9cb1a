package main

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// input is one entry fed to both pipelines.
type input struct {
	Line   string
	Labels map[string]string
	Ts     int64
}

// fcase is one generated case: a pipeline (the top-level stages list) and its inputs.
type fcase struct {
	Index  int
	Stages *yseq
	Inputs []input
	raw    string // -try: the stages as written (Stages is then empty)
}

func (c *fcase) yaml() string {
	if c.raw != "" {
		return c.raw
	}
	return render(c.Stages)
}

func (c *fcase) clone() *fcase {
	d := &fcase{Index: c.Index, Stages: clone(c.Stages).(*yseq)}
	for _, in := range c.Inputs {
		ls := map[string]string{}
		for k, v := range in.Labels {
			ls[k] = v
		}
		d.Inputs = append(d.Inputs, input{Line: in.Line, Labels: ls, Ts: in.Ts})
	}
	return d
}

const baseTs = int64(1_700_000_000_000_000_000)

// Vocabulary shared by the input lines and the stage configs, so that stages find values.
var (
	jsonKeys   = []string{"msg", "level", "time", "ts", "app", "user", "status", "count", "ok", "trace_id", "nested", "items", "dur", "ip", "method", "extra", "num"}
	labelNames = []string{"job", "stream", "app", "level", "host", "env", "status", "user", "method"}
	newKeys    = []string{"out", "lvl", "x", "msg2", "parsed", "t"}
	words      = []string{"hello", "error", "ERROR", "info", "INFO", "warn", "debug", "GET", "POST", "ok", "failed", "user1", "alice", "Bob", "x", "a", "b", "abc", "value"}
)

// gen builds one case from its own random source.
type gen struct {
	r *rand.Rand
	// orderRandom: a stage was generated after which Promtail's output order is random (match
	// with nested stages, multiline); stateful stages (timestamp fudge, multiline) must not
	// follow it, and outputs are compared in any order.
	orderRandom bool
	depth       int
}

func (g *gen) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }

// weighted picks an index by weight.
func (g *gen) weighted(ws []int) int {
	total := 0
	for _, w := range ws {
		total += w
	}
	n := g.r.IntN(total)
	for i, w := range ws {
		if n < w {
			return i
		}
		n -= w
	}
	return len(ws) - 1
}

func newCase(seed int64, index int) *fcase {
	g := &gen{r: rand.New(rand.NewPCG(uint64(seed), uint64(index)*0x9E3779B97F4A7C15+1))}
	c := &fcase{Index: index, Stages: g.stages(1 + g.r.IntN(5))}
	c.Inputs = g.inputs()
	return c
}

// ---- inputs ----

func (g *gen) inputs() []input {
	n := 1 + g.r.IntN(5)
	base := map[string]string{"job": "app"}
	if g.chance(0.6) {
		base["stream"] = g.pick([]string{"stdout", "stderr"})
	}
	if g.chance(0.2) {
		base["level"] = g.pick([]string{"info", "warn"})
	}
	var out []input
	ts := baseTs
	for i := 0; i < n; i++ {
		ls := map[string]string{}
		for k, v := range base {
			ls[k] = v
		}
		if g.chance(0.25) {
			switch g.r.IntN(3) {
			case 0:
				ls["stream"] = g.pick([]string{"stdout", "stderr"})
			case 1:
				ls["app"] = g.pick([]string{"web", "db"})
			case 2:
				ls["host"] = "h1"
			}
		}
		switch g.r.IntN(10) {
		case 0:
			ts -= 1000
		case 1:
		default:
			ts += int64(1 + g.r.IntN(1_000_000))
		}
		out = append(out, input{Line: g.line(), Labels: ls, Ts: ts})
	}
	return out
}

func (g *gen) line() string {
	var s string
	switch g.weighted([]int{40, 14, 16, 8, 7, 5, 5, 5, 2}) {
	case 0:
		s = g.jsonLine()
	case 1:
		s = g.logfmtLine()
	case 2:
		s = g.plainLine()
	case 3:
		s = g.ansiLine()
	case 4:
		s = g.invalidUTF8(g.plainLine())
	case 5:
		s = g.pick([]string{"", " ", "\t", "  ", " \t ", "\r"})
	case 6:
		s = g.pick([]string{"héllo wörld", "日本語のログ", "emoji 😀 ok", "Ωmega ελληνικά", "zero\u200bwidth", "mixed ascii ünïcödé 123"})
	case 7:
		s = g.timestampText()
	case 8:
		// Around 1000 and 1024 bytes, for drop's longer_than.
		s = g.plainLine() + " " + strings.Repeat("x", 990+g.r.IntN(50))
	}
	if g.chance(0.05) && len(s) > 2 {
		// A cut line (a JSON object without its end, half a UTF-8 sequence).
		s = s[:g.r.IntN(len(s))]
	}
	if g.chance(0.03) {
		s = g.invalidUTF8(s)
	}
	return s
}

func (g *gen) invalidUTF8(s string) string {
	bad := g.pick([]string{"\xff", "\xfe\xff", "\xc3\x28", "\xe2\x82", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\x80", "caf\xe9"})
	at := 0
	if len(s) > 0 {
		at = g.r.IntN(len(s) + 1)
	}
	return s[:at] + bad + s[at:]
}

func (g *gen) timestampText() string {
	return g.pick([]string{
		"2023-11-14T22:13:20Z", "2023-11-14T22:13:20.123456789Z", "2023-11-14T22:13:20+02:00",
		"2023-11-14T22:13:20.5-07:00", "2023-11-14 22:13:20", "2023-11-14T22:13:20.123Z",
		"1700000000", "1700000000.25", "1700000000123", "1700000000123456", "1700000000123456789",
		"14/Nov/2023:22:13:20 +0000", "Nov 14 2023 22:13:20", "23-11-14 22:13", "not a time",
		"2023-02-30T00:00:00Z", "-1", "0",
	})
}

func (g *gen) word() string { return g.pick(words) }

// jsonString: a JSON string literal (with its quotes), possibly with escapes, unicode, ANSI
// colour escapes or bytes that are not UTF-8.
func (g *gen) jsonString() string {
	switch g.weighted([]int{30, 8, 6, 6, 4, 4, 4, 4, 4, 3, 3, 8, 4}) {
	case 0:
		return strconv.Quote(g.word())
	case 1:
		return strconv.Quote(g.word() + " " + g.word())
	case 2:
		return `""`
	case 3:
		return g.pick([]string{`"héllo"`, `"日本"`, `"😀"`, `"\u00e9t\u00e9"`, `"\ud83d\ude00"`})
	case 4:
		return g.pick([]string{`"line\nbreak"`, `"tab\there"`, `"quote \" inside"`, `"back\\slash"`, `"sl\/ash"`})
	case 5:
		return g.pick([]string{`"<b>&amp;</b>"`, `"a<b"`, `"x&y"`, `"\u003c\u003e"`})
	case 6:
		return `"\u001b[31mred\u001b[0m"`
	case 7:
		return g.pick([]string{`"\ud800"`, `"\udc00x"`, `"a\ud800\ud800"`})
	case 8:
		return "\"bad\xff\xfeutf\""
	case 9:
		return `" padded "`
	case 10:
		return `"` + strings.Repeat("z", 40) + `"`
	case 11:
		return strconv.Quote(g.timestampText())
	case 12:
		return strconv.Quote(g.pick([]string{"1", "-3", "2.50", "true", "null", "{\"a\":1}"}))
	}
	return `"?"`
}

// jsonNumber: top-level numbers come in any JSON form; nested ones only in the forms Go's
// encoder writes back unchanged (skald keeps nested text as it came).
func (g *gen) jsonNumber(nested bool) string {
	if nested {
		return g.pick([]string{"0", "1", "-2", "42", "1.5", "0.25", "1700000000"})
	}
	return g.pick([]string{
		"0", "1", "-1", "42", "3.14", "-0", "1e3", "1E2", "1.5e-7", "0.1", "100.0", "2.50",
		"1700000000", "1700000000123", "1700000000.5", "123456789", "-17.25", "9007199254740993",
		"12345678901234567890", "1700000000123456789", "1e21", "5e-324", "0.000001", "1e-7", "1e23", "1.5e300",
		"-1700000000123456789", "0.30000000000000004", "123.456e2",
	})
}

func (g *gen) jsonValue(depth int) string {
	switch g.weighted([]int{45, 25, 8, 5, 9, 8}) {
	case 0:
		return g.jsonString()
	case 1:
		return g.jsonNumber(depth > 0)
	case 2:
		return g.pick([]string{"true", "false"})
	case 3:
		return "null"
	case 4:
		if depth < 2 {
			return g.jsonObject(depth+1, []string{"a", "b", "c", "k"})
		}
		return g.jsonString()
	case 5:
		if depth < 2 {
			n := g.r.IntN(4)
			var xs []string
			for i := 0; i < n; i++ {
				xs = append(xs, g.jsonValue(depth+1))
			}
			return "[" + strings.Join(xs, ",") + "]"
		}
		return g.jsonNumber(true)
	}
	return "null"
}

// jsonObject: an object; nested objects get their keys sorted and unique (Go re-marshals
// them sorted, skald keeps their order: README "json: objects/arrays become compact JSON in
// their original key order (the reference re-marshals with sorted keys)").
func (g *gen) jsonObject(depth int, keys []string) string {
	n := g.r.IntN(5)
	if depth == 0 {
		n++
	}
	chosen := map[string]bool{}
	var ks []string
	for i := 0; i < n; i++ {
		k := g.pick(keys)
		if depth > 0 && chosen[k] {
			continue
		}
		chosen[k] = true
		ks = append(ks, k)
	}
	if depth > 0 {
		sort.Strings(ks)
	}
	sep := ":"
	comma := ","
	if depth == 0 && g.chance(0.3) {
		sep, comma = ": ", ", "
	}
	var parts []string
	for _, k := range ks {
		var v string
		switch {
		case k == "nested" && depth == 0 && g.chance(0.8):
			v = g.jsonObject(depth+1, []string{"a", "b", "c", "k"})
		case k == "items" && depth == 0 && g.chance(0.8):
			v = "[" + g.jsonNumber(true) + "," + g.jsonString() + `,{"k":"v"}]`
		case (k == "time" || k == "ts") && g.chance(0.6):
			if g.chance(0.5) {
				v = strconv.Quote(g.timestampText())
			} else {
				v = g.pick([]string{"1700000000", "1700000000123", "1700000000.25", "1700000000123456789"})
			}
		case k == "level" && g.chance(0.7):
			v = strconv.Quote(g.pick([]string{"info", "warn", "error", "debug", "INFO"}))
		default:
			v = g.jsonValue(depth)
		}
		parts = append(parts, strconv.Quote(k)+sep+v)
	}
	return "{" + strings.Join(parts, comma) + "}"
}

func (g *gen) jsonLine() string {
	s := g.jsonObject(0, jsonKeys)
	if g.chance(0.05) {
		s = g.pick([]string{"null", "[1,2]", `"str"`, "42", "{}", "{ }", `{"a":1}{"b":2}`, `{"a":1,}`, " " + s + " "})
	}
	return s
}

func (g *gen) logfmtValue() string {
	switch g.r.IntN(8) {
	case 0:
		return strconv.Quote(g.word() + " " + g.word())
	case 1:
		return ""
	case 2:
		return `"esc \"q\""`
	case 3:
		return g.pick([]string{"1", "3.5", "true", "1700000000"})
	case 4:
		return g.timestampText()
	case 5:
		return "héllo"
	default:
		return g.word()
	}
}

func (g *gen) logfmtLine() string {
	n := 1 + g.r.IntN(5)
	var parts []string
	for i := 0; i < n; i++ {
		k := g.pick(append(jsonKeys[:9:9], "level", "msg"))
		switch g.r.IntN(12) {
		case 0:
			parts = append(parts, k) // a key without a value
		case 1:
			parts = append(parts, "="+g.word())
		default:
			parts = append(parts, k+"="+g.logfmtValue())
		}
	}
	return strings.Join(parts, " ")
}

func (g *gen) plainLine() string {
	return g.pick([]string{
		"ERROR something failed", "INFO starting server on :8080", "[2023-11-14 22:13:20] WARN disk at 91%",
		"  at com.example.Foo.bar(Foo.java:42)", "GET /api/v1/users 200 12ms", "10.0.0.1 - frank [14/Nov/2023:22:13:20 +0000] \"GET / HTTP/1.1\" 200 512",
		"level=info but not quite logfmt: x", "2023-11-14 22:13:20 debug tick", "Traceback (most recent call last):",
		"\tcontinued with tab", "user alice logged in from 192.168.1.20", "count 12345 items 678", "panic: runtime error",
		"trace_id=abc123 span=9", "{not json", "aaa bbb ccc", "a.b.c", "x", "ERROR: error: Error",
	})
}

func (g *gen) ansiLine() string {
	return g.pick([]string{
		"\x1b[31mERROR\x1b[0m something failed", "\x1b[1;32mOK\x1b[m done", "\x1b(B\x1b[mplain after reset",
		"\x1b]0;title\x07text", "\x1b[38;5;196mcolour 256\x1b[39m", "\x1b[2K\rprogress 50%", "no colour here",
		"\x1b[0;33mWARN\x1b[0m \x1b[36m[main]\x1b[0m msg", "\x1b[?25lhidden cursor\x1b[?25h", "bare \x1b escape",
	})
}

// ---- stages ----

// stages generates a list of n stages.
func (g *gen) stages(n int) *yseq {
	s := &yseq{stages: true}
	for i := 0; i < n; i++ {
		s.items = append(s.items, g.stage())
	}
	return s
}

func (g *gen) stage() node {
	type entry struct {
		weight int
		make   func() node
	}
	table := []entry{
		{15, g.jsonStage}, {8, g.regexStage}, {6, g.replaceStage}, {6, g.logfmtStage},
		{10, g.labelsStage}, {4, g.labeldropStage}, {3, g.labelallowStage}, {5, g.staticLabelsStage},
		{8, g.templateStage}, {6, g.outputStage}, {8, g.timestampStage}, {6, g.matchStage},
		{6, g.dropStage}, {5, g.structuredMetadataStage}, {4, g.tenantStage}, {4, g.decolorizeStage},
		{3, g.packStage}, {3, g.multilineStage},
	}
	ws := make([]int, len(table))
	for i, e := range table {
		ws[i] = e.weight
	}
	n := table[g.weighted(ws)].make()
	if g.chance(0.01) {
		// An unknown field (README: "unknown fields (the reference ignores them ...)").
		if m, ok := n.(*ymap); ok {
			if cfg, ok := m.pairs[0].value.(*ymap); ok {
				cfg.add("sourc", str("x"))
			}
		}
	}
	return n
}

// name: a map key as written in the config; the YAML 1.1 words (n, y, on) are written plain
// half the time, as a user would, which Promtail's YAML reads as booleans.
func (g *gen) name(s string) *scalar {
	if yaml11Special[s] && g.chance(0.5) {
		return plainScalar(s)
	}
	return str(s)
}

// key: an extracted key a stage reads (mostly one the inputs or earlier stages may set).
func (g *gen) key() string {
	switch g.weighted([]int{70, 12, 10, 8}) {
	case 0:
		return g.pick(jsonKeys)
	case 1:
		return g.pick(labelNames)
	case 2:
		return g.pick(newKeys)
	default:
		return g.pick([]string{"missing", "msg", "level"})
	}
}

// labelName: mostly valid; the YAML 1.1 words and invalid names now and then.
func (g *gen) labelName() string {
	switch {
	case g.chance(0.01):
		return g.pick([]string{"n", "y", "on"})
	case g.chance(0.01):
		return g.pick([]string{"bad-name", "1abc", "a.b"})
	case g.chance(0.3):
		return g.pick(jsonKeys[:10])
	}
	return g.pick(labelNames)
}

func (g *gen) jsonStage() node {
	cfg := &ymap{}
	exprs := &ymap{}
	n := 1 + g.r.IntN(4)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		var name string
		if g.chance(0.7) {
			name = g.pick(jsonKeys)
		} else {
			name = g.pick(newKeys)
		}
		if g.chance(0.01) {
			name = g.pick([]string{"n", "y"})
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		var path *scalar
		switch g.weighted([]int{40, 40, 3, 2, 1}) {
		case 0:
			path = nullScalar()
		case 1:
			path = str(g.pick([]string{
				"msg", "level", "nested.a", "nested.b", "nested.b.c", "nested", "items", "items[0]", "items[-1]",
				"items[2].k", `"trace_id"`, "nested.missing.deep", "missing", "time", "ts", "count", "extra", "nested.k",
			}))
		case 2:
			path = str(g.pick([]string{"trace-id", "a..b", "items[", "'unterminated"})) // both refuse
		case 3:
			path = str(g.pick([]string{ // JMESPath beyond paths: projections, filters, functions, pipes
				"length(items)", "items[*].k", "nested | a", "items[?k > `1`].k", "items[0:2]",
				"{m: msg, l: level}", "[msg, level]", "to_string(nested)", "sort(items[*].k)",
				"join(',', items[*].k)", "max(items[*].k)", "items[].k | [0]", "msg || level",
				"contains(msg, 'a')", "type(nested)", "not_null(missing, msg)", "reverse(items)",
			}))
		case 4:
			path = str("")
		}
		exprs.addScalarKey(g.name(name), path)
	}
	cfg.add("expressions", exprs)
	if g.chance(0.2) {
		cfg.add("source", str(g.pick([]string{"nested", "extra", "msg", "items", "missing"})))
	}
	if g.chance(0.15) {
		cfg.add("drop_malformed", plainScalar("true"))
	}
	return stage("json", cfg)
}

func (g *gen) logfmtStage() node {
	m := &ymap{}
	n := 1 + g.r.IntN(3)
	// Promtail inverts the mapping (logfmt key -> name) by iterating a Go map: two names of
	// one logfmt key would get it in random order. Names and logfmt keys are unique here.
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		name := g.pick(append(jsonKeys[:9:9], newKeys...))
		from := name
		if g.chance(0.5) {
			from = g.pick(jsonKeys[:9])
		}
		if seen["name "+name] || seen["from "+from] {
			continue
		}
		seen["name "+name], seen["from "+from] = true, true
		if from == name {
			m.addScalarKey(g.name(name), nullScalar())
		} else {
			m.addScalarKey(g.name(name), str(from))
		}
	}
	cfg := (&ymap{}).add("mapping", m)
	if g.chance(0.2) {
		cfg.add("source", str(g.key()))
	}
	return stage("logfmt", cfg)
}

var namedRegexes = []string{
	`(?P<level>[A-Z]+)`, `level=(?P<level>\w+)`, `^(?P<first>\S+)\s+(?P<rest>.*)$`, `(?P<num>\d+)`,
	`(?P<word>[a-z]+)(?P<opt>x)?`, `(?<ip>\d+\.\d+\.\d+\.\d+)`, `^(?P<all>.*)$`, `(?P<dot>.)`,
	`"msg":"(?P<m>[^"]*)"`, `(?i)(?P<err>error)`, `(?P<uni>\p{L}+)`, `(?P<esc>\x1b\[[0-9;]*m)`,
	`(?P<user>alice|bob)`, `^(?P<empty>)`, `(?P<ts>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})`,
	`(?P<a>a)|(?P<b>b)`, `(?s)(?P<ml>.+)`, `(?P<ws>\s+)`, `(?P<msg>.+)`, `(?P<level>info|warn|error)`,
}

func (g *gen) regexStage() node {
	cfg := &ymap{}
	var expr string
	switch {
	case g.chance(0.02):
		expr = `\d+` // no named group: skald refuses (README)
	case g.chance(0.02):
		expr = `(?P<x>[` // both refuse
	default:
		expr = g.pick(namedRegexes)
	}
	cfg.add("expression", str(expr))
	if g.chance(0.25) {
		cfg.add("source", str(g.key()))
	}
	return stage("regex", cfg)
}

func (g *gen) replaceStage() node {
	cfg := &ymap{}
	cfg.add("expression", str(g.pick([]string{
		`(\d+)`, `(?P<secret>\d{3,})`, `(error|ERROR)`, `(a)(b)?`, `(\w+)@`, `(\s+)`, `(.)`, `(x*)`,
		`(\x1b\[[0-9;]*m)`, `"(?P<k>[a-z]+)":`, `(alice)`, `(é)`, `^(.)`, `(.)$`, `(o)`,
	})))
	cfg.add("replace", str(g.pick([]string{
		"***", "", "{{ .Value | ToUpper }}", "<{{ .Value }}>", "{{ .level }}", "{{ .Value }}{{ .Value }}",
		"-", "{{ ToLower .Value }}", "{{ if eq .Value \"a\" }}A{{ end }}",
	})))
	if g.chance(0.2) {
		cfg.add("source", str(g.key()))
	}
	return stage("replace", cfg)
}

func (g *gen) labelsStage() node {
	m := &ymap{}
	n := 1 + g.r.IntN(3)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		name := g.labelName()
		if seen[name] {
			continue
		}
		seen[name] = true
		if g.chance(0.5) {
			m.addScalarKey(g.name(name), nullScalar())
		} else {
			m.addScalarKey(g.name(name), str(g.key()))
		}
	}
	return stage("labels", m)
}

func (g *gen) labelList(n int) *yseq {
	s := &yseq{}
	for i := 0; i < n; i++ {
		s.items = append(s.items, g.name(g.labelName()))
	}
	return s
}

func (g *gen) labeldropStage() node  { return stage("labeldrop", g.labelList(1+g.r.IntN(2))) }
func (g *gen) labelallowStage() node { return stage("labelallow", g.labelList(1+g.r.IntN(3))) }

func (g *gen) staticLabelsStage() node {
	m := &ymap{}
	n := 1 + g.r.IntN(2)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		name := g.labelName()
		if seen[name] {
			continue
		}
		seen[name] = true
		var v *scalar
		switch g.weighted([]int{60, 10, 10, 5, 5}) {
		case 0:
			v = str(g.pick([]string{"prod", "x", "web", "stdout", "app"}))
		case 1:
			v = &scalar{text: "", style: styleDouble}
		case 2:
			v = str(g.pick([]string{"héllo", "a b", "with:colon", "日本"}))
		case 3:
			v = plainScalar(g.pick([]string{"5", "1.5"})) // YAML types it (README: plain scalars)
		case 4:
			v = nullScalar()
		}
		m.addScalarKey(g.name(name), v)
	}
	return stage("static_labels", m)
}

var templates = []string{
	"{{ .Value }}", "{{ .Value | ToUpper }}", "{{ ToLower .Value }}", `{{ Replace .Value "a" "b" -1 }}`,
	`{{ Replace .Value "o" "0" 1 }}`, "{{ trim .Value }}", `{{ .Value | default "none" }}`,
	`{{ printf "%s-%s" .Value .app }}`, `{{ printf "%d" 5 }}`, `{{ printf "%q" .Value }}`, `{{ printf "%v" .Value }}`,
	`{{ if eq .Value "error" }}E{{ else }}{{ .Value }}{{ end }}`, "{{ .Entry }}", "{{ .Value }}-{{ .level }}",
	"{{ .Value | trim | ToUpper }}", "{{ .missing }}", `{{ "" }}`, "static", "{{ .Entry | ToUpper }}",
	`{{ default "d" .missing }}`, `{{ .msg | printf "%.3s" }}`, "{{ ToUpper .level }}:{{ .Value }}",
	`{{ printf "%5s|" .Value }}`, `{{ Replace .Entry " " "_" -1 }}`,
}

func (g *gen) templateStage() node {
	cfg := &ymap{}
	var src string
	if g.chance(0.7) {
		src = g.key()
	} else {
		src = g.pick(newKeys)
	}
	cfg.add("source", str(src))
	if g.chance(0.02) {
		return stage("template", cfg) // no template: skald refuses (README)
	}
	cfg.add("template", str(g.pick(templates)))
	return stage("template", cfg)
}

func (g *gen) outputStage() node {
	return stage("output", (&ymap{}).add("source", str(g.key())))
}

func (g *gen) timeFormat() string {
	if g.chance(0.6) {
		return g.pick([]string{"RFC3339", "RFC3339Nano", "Unix", "UnixMs", "UnixNs", "UnixUs", "RFC1123", "ANSIC"})
	}
	return g.pick([]string{
		"2006-01-02T15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02T15:04:05.000Z", "02/Jan/2006:15:04:05 -0700",
		"Jan 2 2006 15:04:05", "2006-01-02T15:04:05.999999999Z07:00", "06-01-02 15:04",
	})
}

func (g *gen) timestampStage() node {
	cfg := &ymap{}
	cfg.add("source", str(g.pick([]string{"time", "ts", "time", "ts", "msg", "num", "count", "t", "missing"})))
	cfg.add("format", str(g.timeFormat()))
	if g.chance(0.2) {
		cfg.add("fallback_formats", &yseq{items: []node{str(g.timeFormat()), str(g.timeFormat())}})
	}
	if g.chance(0.15) {
		cfg.add("location", str(g.pick([]string{"UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata"})))
	}
	switch {
	case g.orderRandom:
		// Fudge keeps state per label set: after match or multiline the order it sees is random.
		cfg.addPinned("action_on_failure", str("skip"))
	case g.chance(0.3):
		cfg.add("action_on_failure", str("skip"))
	case g.chance(0.2):
		cfg.add("action_on_failure", str("fudge"))
	}
	return stage("timestamp", cfg)
}

func (g *gen) selector() string {
	ops := []string{"=", "!=", "=~", "!~"}
	n := 1 + g.r.IntN(2)
	var ms []string
	for i := 0; i < n; i++ {
		name := g.pick([]string{"job", "stream", "app", "level", "host"})
		op := ops[g.weighted([]int{50, 15, 25, 10})]
		var v string
		if strings.HasSuffix(op, "~") {
			v = g.pick([]string{"a.*", "std(out|err)", "app|web", ".+", "info|warn", "x?"})
		} else {
			v = g.pick([]string{"app", "stdout", "stderr", "web", "info", "warn", "h1"})
		}
		ms = append(ms, name+op+strconv.Quote(v))
	}
	s := "{" + strings.Join(ms, ", ") + "}"
	for i := g.r.IntN(3); i > 0; i-- {
		switch g.r.IntN(4) {
		case 0:
			s += ` |= "` + g.pick([]string{"error", "ERROR", "info", "msg", "é"}) + `"`
		case 1:
			s += ` != "` + g.pick([]string{"debug", "ok", "x"}) + `"`
		case 2:
			s += ` |~ "` + g.pick([]string{`err(or)?`, `\\d+`, `(?i)warn`, `^\\{`}) + `"`
		case 3:
			s += ` !~ "` + g.pick([]string{`^\\s*$`, `debug|trace`}) + `"`
		}
	}
	return s
}

func (g *gen) matchStage() node {
	cfg := &ymap{}
	cfg.add("selector", str(g.selector()))
	if g.depth >= 2 || g.chance(0.3) {
		cfg.add("action", str("drop"))
		if g.chance(0.4) {
			cfg.add("drop_counter_reason", str(g.pick([]string{"custom_reason", "noise"})))
		}
		return stage("match", cfg)
	}
	g.depth++
	nested := g.stages(1 + g.r.IntN(3))
	g.depth--
	cfg.add("stages", nested)
	if g.chance(0.5) {
		cfg.add("action", str("keep"))
	}
	g.orderRandom = true
	return stage("match", cfg)
}

func (g *gen) dropStage() node {
	cfg := &ymap{}
	switch g.r.IntN(7) {
	case 0:
		cfg.add("expression", str(g.pick([]string{"error", `^\s*$`, "debug", "[0-9]{4}", "(?i)info", "é", "^$"})))
	case 1:
		cfg.add("source", str(g.key()))
		cfg.add("expression", str(g.pick([]string{"error", "^a", ".*", "^$", "[0-9]+", "true"})))
	case 2:
		cfg.add("source", str(g.key()))
		cfg.add("value", str(g.pick([]string{"error", "info", "x", "", "1", "true"})))
	case 3:
		cfg.add("source", &yseq{items: []node{str(g.key()), str(g.key())}})
		if g.chance(0.5) {
			cfg.add("separator", str(","))
			cfg.add("value", str("info,app"))
		} else {
			cfg.add("expression", str(g.pick([]string{"^info;", ";app$", ".+;.+"})))
		}
	case 4:
		cfg.add("source", str(g.key()))
	case 5:
		cfg.add("longer_than", str(g.pick([]string{"16", "32b", "1kb", "1KB", "1k", "1KiB", "20B", "8", "1000", "1mb"})))
		if g.chance(0.3) {
			cfg.add("expression", str("e"))
		}
	case 6:
		if g.chance(0.5) {
			cfg.add("source", str(g.key()))
			cfg.add("value", str("x"))
			cfg.add("expression", str("x")) // both refuse
		} else {
			cfg.add("value", str("x")) // both refuse: value needs source
		}
	}
	if g.chance(0.3) {
		cfg.add("drop_counter_reason", str(g.pick([]string{"custom_reason", "too_long"})))
	}
	return stage("drop", cfg)
}

func (g *gen) structuredMetadataStage() node {
	m := &ymap{}
	n := 1 + g.r.IntN(2)
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		name := g.labelName()
		if seen[name] {
			continue
		}
		seen[name] = true
		if g.chance(0.5) {
			m.addScalarKey(g.name(name), nullScalar())
		} else {
			m.addScalarKey(g.name(name), str(g.key()))
		}
	}
	return stage("structured_metadata", m)
}

func (g *gen) tenantStage() node {
	cfg := &ymap{}
	switch g.r.IntN(3) {
	case 0:
		cfg.add("source", str(g.key()))
	case 1:
		cfg.add("value", str(g.pick([]string{"team-a", "tenant_1", "Org.1", "a"})))
	case 2:
		cfg.add("label", str(g.pick(labelNames)))
	}
	return stage("tenant", cfg)
}

func (g *gen) decolorizeStage() node {
	if g.chance(0.5) {
		return stage("decolorize", nullScalar())
	}
	return stage("decolorize", &ymap{})
}

func (g *gen) packStage() node {
	cfg := &ymap{}
	ls := &yseq{}
	for i := 1 + g.r.IntN(3); i > 0; i-- {
		if g.chance(0.5) {
			ls.items = append(ls.items, str(g.pick(labelNames)))
		} else {
			ls.items = append(ls.items, str(g.key()))
		}
	}
	cfg.add("labels", ls)
	// ingest_timestamp: true stamps entries with time.Now in Promtail.
	cfg.addPinned("ingest_timestamp", plainScalar("false"))
	return stage("pack", cfg)
}

func (g *gen) multilineStage() node {
	if g.orderRandom || g.depth > 0 {
		return g.decolorizeStage()
	}
	g.orderRandom = true
	cfg := &ymap{}
	cfg.add("firstline", str(g.pick([]string{`^\[`, `^\d{4}-\d{2}-\d{2}`, `^[A-Z]`, `^\S`, `^\{`, `^\x1b`})))
	// Long: a block ends at the next firstline or at the end of the input, never on a timer.
	cfg.addPinned("max_wait_time", str("1h"))
	return stage("multiline", cfg)
}

// describe prints a case's inputs as Go-quoted strings.
func describeInputs(ins []input) string {
	var b strings.Builder
	for _, in := range ins {
		keys := make([]string, 0, len(in.Labels))
		for k := range in.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var ls []string
		for _, k := range keys {
			ls = append(ls, fmt.Sprintf("%s=%q", k, in.Labels[k]))
		}
		fmt.Fprintf(&b, "    line=%q labels={%s} ts=%d\n", in.Line, strings.Join(ls, ", "), in.Ts)
	}
	return b.String()
}
