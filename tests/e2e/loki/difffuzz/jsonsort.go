package main

import (
	"encoding/json"
	"sort"
	"strings"
)

// sortJSONKeys: s with the members of every object of it sorted by key, each member's text
// kept as it is (escapes, numbers, spacing); a string member that holds JSON text (pack's
// values) is sorted the same way and written back escaped as Go escapes it. s itself when it is
// not one JSON object or array.
func sortJSONKeys(s string) string {
	if s == "" || (s[0] != '{' && s[0] != '[') || !json.Valid([]byte(s)) {
		return s
	}
	p := &jsonSorter{s: s}
	out, ok := p.value()
	if !ok || p.i != len(s) {
		return s
	}
	return out
}

type jsonSorter struct {
	s string
	i int
}

func (p *jsonSorter) ws() string {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *jsonSorter) value() (string, bool) {
	if p.i >= len(p.s) {
		return "", false
	}
	switch p.s[p.i] {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		raw, ok := p.str()
		if !ok {
			return "", false
		}
		var inner string
		if err := json.Unmarshal([]byte(raw), &inner); err == nil {
			if sorted := sortJSONKeys(inner); sorted != inner {
				b, _ := json.Marshal(sorted)
				return string(b), true
			}
		}
		return raw, true
	}
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(",]} \t\r\n", p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i], p.i > start
}

func (p *jsonSorter) str() (string, bool) {
	start := p.i
	p.i++
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return p.s[start:p.i], true
		}
		p.i++
	}
	return "", false
}

func (p *jsonSorter) object() (string, bool) {
	p.i++ // {
	type member struct{ key, text string }
	var members []member
	lead := p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return "{" + lead + "}", true
	}
	for {
		pre := lead + p.ws()
		lead = ""
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return "", false
		}
		key, ok := p.str()
		if !ok {
			return "", false
		}
		mid := p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return "", false
		}
		p.i++
		mid2 := p.ws()
		v, ok := p.value()
		if !ok {
			return "", false
		}
		post := p.ws()
		members = append(members, member{key, pre + key + mid + ":" + mid2 + v + post})
		if p.i >= len(p.s) {
			return "", false
		}
		if p.s[p.i] == '}' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return "", false
		}
		p.i++
	}
	sort.SliceStable(members, func(a, b int) bool { return members[a].key < members[b].key })
	texts := make([]string, len(members))
	for i, m := range members {
		texts[i] = m.text
	}
	return "{" + strings.Join(texts, ",") + "}", true
}

func (p *jsonSorter) array() (string, bool) {
	p.i++ // [
	var items []string
	lead := p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return "[" + lead + "]", true
	}
	for {
		pre := lead + p.ws()
		lead = ""
		v, ok := p.value()
		if !ok {
			return "", false
		}
		items = append(items, pre+v+p.ws())
		if p.i >= len(p.s) {
			return "", false
		}
		if p.s[p.i] == ']' {
			p.i++
			break
		}
		if p.s[p.i] != ',' {
			return "", false
		}
		p.i++
	}
	return "[" + strings.Join(items, ",") + "]", true
}
