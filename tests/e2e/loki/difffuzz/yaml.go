package main

import (
	"fmt"
	"regexp"
	"strings"

	"gopkg.in/yaml.v2"
)

// node is a piece of a generated pipeline config: a map, a list or a scalar, rendered as YAML
// text that both sides read (Promtail with yaml.v2, skald with yaml-cpp).
type node interface {
	isNode()
}

// style is how a scalar is written.
type style int

const (
	styleAuto   style = iota // plain when that reads back as the same string, else quoted
	stylePlain               // as is (the generator knows it is safe, or wants YAML to type it)
	styleSingle              // '...'
	styleDouble              // "..." with escapes
	styleNull                // nothing after the colon
)

// scalar is a YAML scalar.
type scalar struct {
	text  string
	style style
}

// pair is one entry of a map; the shrinker keeps pinned ones (what keeps a case away from
// Promtail's clock or its random order).
type pair struct {
	key    *scalar
	value  node
	pinned bool
}

// ymap is a YAML block map (entries in order).
type ymap struct {
	pairs []pair
}

// yseq is a YAML block list; stages marks a list of pipeline stages (the top level and a
// match stage's `stages`), whose items the shrinker may remove.
type yseq struct {
	items  []node
	stages bool
}

func (*scalar) isNode() {}
func (*ymap) isNode()   {}
func (*yseq) isNode()   {}

func str(s string) *scalar         { return &scalar{text: s} }
func plainScalar(s string) *scalar { return &scalar{text: s, style: stylePlain} }
func nullScalar() *scalar          { return &scalar{style: styleNull} }

func (m *ymap) add(key string, v node) *ymap {
	m.pairs = append(m.pairs, pair{key: str(key), value: v})
	return m
}

func (m *ymap) addPinned(key string, v node) *ymap {
	m.pairs = append(m.pairs, pair{key: str(key), value: v, pinned: true})
	return m
}

func (m *ymap) addScalarKey(key *scalar, v node) *ymap {
	m.pairs = append(m.pairs, pair{key: key, value: v})
	return m
}

// stage is the one-key map `name: config`.
func stage(name string, config node) *ymap {
	return (&ymap{}).add(name, config)
}

// stageName is the name of a stage item of a stages list.
func stageName(n node) string {
	if m, ok := n.(*ymap); ok && len(m.pairs) == 1 {
		return m.pairs[0].key.text
	}
	return "?"
}

var plainSafe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.]*$`)

// yaml11Special: plain scalars YAML 1.1 (yaml.v2) reads as something other than a string.
var yaml11Special = map[string]bool{}

func init() {
	for _, w := range []string{"y", "yes", "n", "no", "true", "false", "on", "off", "null"} {
		yaml11Special[w] = true
		yaml11Special[strings.ToUpper(w)] = true
		yaml11Special[strings.ToUpper(w[:1])+w[1:]] = true
	}
	yaml11Special["~"] = true
}

func quoteSingle(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func quoteDouble(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func needsDouble(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return true
		}
	}
	return false
}

func (s *scalar) render() string {
	switch s.style {
	case stylePlain:
		return s.text
	case styleSingle:
		return quoteSingle(s.text)
	case styleDouble:
		return quoteDouble(s.text)
	case styleNull:
		return ""
	}
	if plainSafe.MatchString(s.text) && !yaml11Special[s.text] {
		return s.text
	}
	if needsDouble(s.text) {
		return quoteDouble(s.text)
	}
	return quoteSingle(s.text)
}

// render writes n as block YAML at the given indentation.
func render(n node) string {
	var b strings.Builder
	renderNode(&b, n, 0)
	return b.String()
}

func renderNode(b *strings.Builder, n node, indent int) {
	pad := strings.Repeat(" ", indent)
	switch x := n.(type) {
	case *yseq:
		if len(x.items) == 0 {
			b.WriteString(pad + "[]\n")
			return
		}
		for _, it := range x.items {
			b.WriteString(pad + "- ")
			renderInline(b, it, indent+2)
		}
	case *ymap:
		if len(x.pairs) == 0 {
			b.WriteString(pad + "{}\n")
			return
		}
		for _, p := range x.pairs {
			b.WriteString(pad)
			renderPair(b, p, indent)
		}
	case *scalar:
		b.WriteString(pad + x.render() + "\n")
	}
}

// renderInline writes n after a "- " that is already written.
func renderInline(b *strings.Builder, n node, indent int) {
	switch x := n.(type) {
	case *ymap:
		if len(x.pairs) == 0 {
			b.WriteString("{}\n")
			return
		}
		for i, p := range x.pairs {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", indent))
			}
			renderPair(b, p, indent)
		}
	case *yseq:
		if len(x.items) == 0 {
			b.WriteString("[]\n")
			return
		}
		b.WriteString("\n")
		renderNode(b, x, indent)
	case *scalar:
		b.WriteString(x.render() + "\n")
	}
}

func renderPair(b *strings.Builder, p pair, indent int) {
	b.WriteString(p.key.render() + ":")
	switch v := p.value.(type) {
	case *scalar:
		if v.style == styleNull {
			b.WriteString("\n")
		} else {
			b.WriteString(" " + v.render() + "\n")
		}
	case *ymap:
		if len(v.pairs) == 0 {
			b.WriteString(" {}\n")
			return
		}
		b.WriteString("\n")
		renderNode(b, v, indent+2)
	case *yseq:
		if len(v.items) == 0 {
			b.WriteString(" []\n")
			return
		}
		b.WriteString("\n")
		renderNode(b, v, indent+2)
	}
}

// walk calls f for every node of the tree, with the key it is the value of ("" for list items
// and the root).
func walk(n node, key string, f func(n node, key string)) {
	f(n, key)
	switch x := n.(type) {
	case *ymap:
		for _, p := range x.pairs {
			f(p.key, "")
			walk(p.value, p.key.text, f)
		}
	case *yseq:
		for _, it := range x.items {
			walk(it, "", f)
		}
	}
}

// clone copies a tree (the shrinker edits copies).
func clone(n node) node {
	switch x := n.(type) {
	case *ymap:
		m := &ymap{}
		for _, p := range x.pairs {
			k := *p.key
			m.pairs = append(m.pairs, pair{key: &k, value: clone(p.value), pinned: p.pinned})
		}
		return m
	case *yseq:
		s := &yseq{stages: x.stages}
		for _, it := range x.items {
			s.items = append(s.items, clone(it))
		}
		return s
	case *scalar:
		c := *x
		return &c
	}
	return n
}

// typedPlainScalars lists the plain scalars of a tree that YAML 1.1 (yaml.v2, Promtail) reads
// as something other than a string (a bool, a number, null).
func typedPlainScalars(n node) []string {
	var out []string
	walk(n, "", func(n node, _ string) {
		s, ok := n.(*scalar)
		if !ok || s.style == styleNull {
			return
		}
		if s.render() != s.text {
			return // quoted
		}
		var v interface{}
		if err := yaml.Unmarshal([]byte(s.text), &v); err != nil {
			return
		}
		if _, isString := v.(string); !isString {
			out = append(out, s.text)
		}
	})
	return out
}
