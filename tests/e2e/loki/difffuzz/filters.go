package main

import (
	"regexp"
	"strconv"
	"strings"
)

// deliberate is one difference pipeline_stages/README.md lists as deliberate. A config that
// skald refuses and Promtail accepts is explained when every problem skald names matches some
// filter's skaldRefuses; one Promtail refuses and skald accepts, by a promtailRefuses; an
// output difference is explained when, for a case the filter applies to, normalize makes both
// results the same.
type deliberate struct {
	name            string
	readme          string         // the README's words the filter relies on
	skaldRefuses    *regexp.Regexp // one problem of skald's config error
	promtailRefuses func(c *fcase, p *result) bool
	// applies: the case has what the difference needs; normalize edits both results (copies),
	// or explains says that any difference in the outputs of such a case is this one.
	applies   func(c *fcase) bool
	normalize func(c *fcase, p, s *result)
	explains  bool
}

var deliberates = []deliberate{
	{
		name: "json-nested-key-order",
		readme: "json: objects/arrays become compact JSON in their original key order (the reference re-marshals " +
			"a Go map: its key order changes from run to run)",
		applies: func(c *fcase) bool { return hasStage(c.Stages, "json") },
		normalize: func(c *fcase, p, s *result) {
			for _, r := range []*result{p, s} {
				for i := range r.Outputs {
					o := &r.Outputs[i]
					o.Line = sortJSONKeys(o.Line)
					o.Tenant = sortJSONKeys(o.Tenant)
					for k, v := range o.Labels {
						o.Labels[k] = sortJSONKeys(v)
					}
					for j := range o.SM {
						o.SM[j][1] = sortJSONKeys(o.SM[j][1])
					}
				}
			}
		},
	},
	{
		name:         "unknown-field",
		readme:       "Unknown fields in a stage config are errors (with did-you-mean); the reference ignores them.",
		skaldRefuses: regexp.MustCompile(`unknown field`),
	},
	{
		name:         "labels-pack-without-labels",
		readme:       "a `labels`/`pack` without labels",
		skaldRefuses: regexp.MustCompile(`\((labels|pack)\).*(needs a map of label name|field "labels": is required)`),
	},
	{
		name:         "labeldrop-static-labels-invalid-name",
		readme:       "`labeldrop`/`labelallow`/`static_labels` with an invalid label name",
		skaldRefuses: regexp.MustCompile(`\((labeldrop|labelallow|static_labels)\).*invalid label name`),
	},
	{
		name:         "regex-without-named-group",
		readme:       "`regex` without a named group",
		skaldRefuses: regexp.MustCompile(`\(regex\).*has no named capture group`),
	},
	{
		name:         "template-without-template",
		readme:       "`template` without `template`",
		skaldRefuses: regexp.MustCompile(`\(template\): field "template": is required`),
	},
	{
		name:         "replace-unparsable-template",
		readme:       "an unparsable `replace` template",
		skaldRefuses: regexp.MustCompile(`\(replace\): field "replace"`),
	},
	{
		name: "yaml-plain-scalar-typing",
		readme: "YAML: skald reads a plain scalar as the type the field needs, so `n`, `y`, `yes`, `on` stay " +
			"strings; the reference parses with YAML 1.1 and refuses `expressions: {n: n}` or `static_labels: {x: y}`",
		promtailRefuses: func(c *fcase, p *result) bool {
			return yamlTypeError.MatchString(p.Err) && len(typedPlainScalars(c.Stages)) > 0
		},
	},
	{
		name:    "multiline-keeps-structured-metadata",
		readme:  "multiline: the merged entry keeps the structured metadata of the block's first line",
		applies: func(c *fcase) bool { return hasStage(c.Stages, "multiline") },
		normalize: func(c *fcase, p, s *result) {
			for i := range s.Outputs {
				s.Outputs[i].SM = nil
			}
			for i := range p.Outputs {
				p.Outputs[i].SM = nil
			}
		},
	},
	{
		name:     "structured-metadata-one-label-twice",
		readme:   "structured_metadata: two names reading the same label each get it",
		applies:  func(c *fcase) bool { return smSourceTwice(c.Stages) },
		explains: true,
	},
	{
		name:      "drop-malformed-counted",
		readme:    "`drop_malformed` counts its drops as \"drop_malformed\" (the reference counts none)",
		applies:   func(c *fcase) bool { return hasPair(c.Stages, "drop_malformed", "true") },
		normalize: func(c *fcase, p, s *result) { s.Dropped = without(s.Dropped, "drop_malformed") },
	},
	{
		name:    "labels-empty-value",
		readme:  "labels: an empty value removes the label (Promtail sets it to \"\", which Loki reads as no label)",
		applies: func(c *fcase) bool { return hasStage(c.Stages, "labels") },
		normalize: func(c *fcase, p, s *result) {
			for _, o := range p.Outputs {
				for k, v := range o.Labels {
					if v == "" {
						delete(o.Labels, k)
					}
				}
			}
		},
	},
	{
		name: "integers-exact",
		readme: "Integers stay exact when a plain path extracts them (a nanosecond `UnixNs` timestamp keeps " +
			"its last digits; the reference rounds through float64)",
		applies: func(c *fcase) bool {
			for _, in := range c.Inputs {
				for _, m := range longDigits.FindAllString(in.Line, -1) {
					// An integer of int64 that float64 cannot hold (beyond 2^53).
					if _, err := strconv.ParseInt(digits.FindString(m), 10, 64); err == nil {
						return true
					}
				}
			}
			return false
		},
		normalize: func(c *fcase, p, s *result) {
			ts := hasStage(c.Stages, "timestamp")
			for _, r := range []*result{p, s} {
				for i := range r.Outputs {
					o := &r.Outputs[i]
					o.Line = longDigits.ReplaceAllString(o.Line, "${1}#${2}")
					o.Tenant = longDigits.ReplaceAllString(o.Tenant, "${1}#${2}")
					for k, v := range o.Labels {
						o.Labels[k] = longDigits.ReplaceAllString(v, "${1}#${2}")
					}
					for j := range o.SM {
						o.SM[j][1] = longDigits.ReplaceAllString(o.SM[j][1], "${1}#${2}")
					}
					if ts {
						o.Ts = 0
					}
				}
			}
		},
	},
}

// yamlTypeError: Promtail's refusal of a value its YAML typed (mapstructure's words).
var yamlTypeError = regexp.MustCompile(`unconvertible type|expected type|cannot unmarshal`)

// skaldProblems splits skald's config error into its problems (ConfigError joins them with
// "; ", each naming its stage).
func skaldProblems(msg string) []string {
	parts := strings.Split(msg, "; pipeline stage ")
	for i := 1; i < len(parts); i++ {
		parts[i] = "pipeline stage " + parts[i]
	}
	return parts
}

var sizeWithUnit = regexp.MustCompile(`^([0-9]+)\s*([km]i?b?)$`)

// longDigits: a run of 16 to 19 digits (an integer of int64 beyond 2^53, as Promtail rounds it
// or skald keeps it), not part of a longer run.
var (
	longDigits = regexp.MustCompile(`(^|[^0-9])[0-9]{16,19}([^0-9]|$)`)
	digits     = regexp.MustCompile(`[0-9]+`)
)

func without(xs []string, drop string) []string {
	var out []string
	for _, x := range xs {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// hasStage: a stage of this name is in the pipeline (in a match stage's stages too).
func hasStage(n node, name string) bool {
	found := false
	walk(n, "", func(n node, _ string) {
		if s, ok := n.(*yseq); ok && s.stages {
			for _, it := range s.items {
				if stageName(it) == name {
					found = true
				}
			}
		}
	})
	return found
}

// hasPair: some map of the config has key: value.
func hasPair(n node, key, value string) bool {
	found := false
	walk(n, "", func(n node, _ string) {
		if m, ok := n.(*ymap); ok {
			for _, p := range m.pairs {
				if s, ok := p.value.(*scalar); ok && p.key.text == key && s.text == value {
					found = true
				}
			}
		}
	})
	return found
}

// structuredMetadataSources: the sources the structured_metadata stages read (the name when
// the source is empty).
func structuredMetadataSources(n node) []string {
	var out []string
	walk(n, "", func(n node, _ string) {
		m, ok := n.(*ymap)
		if !ok || len(m.pairs) != 1 || m.pairs[0].key.text != "structured_metadata" {
			return
		}
		cfg, ok := m.pairs[0].value.(*ymap)
		if !ok {
			return
		}
		for _, p := range cfg.pairs {
			src := p.key.text
			if s, ok := p.value.(*scalar); ok && strings.TrimSpace(s.text) != "" {
				src = s.text
			}
			out = append(out, src)
		}
	})
	return out
}

// smSourceTwice: a structured_metadata stage names one source (a value, or the name itself when
// the value is empty) for two names.
func smSourceTwice(n node) bool {
	found := false
	walk(n, "", func(n node, _ string) {
		s, ok := n.(*yseq)
		if !ok || !s.stages {
			return
		}
		for _, it := range s.items {
			m, ok := it.(*ymap)
			if !ok || stageName(it) != "structured_metadata" {
				continue
			}
			cfg, ok := m.pairs[0].value.(*ymap)
			if !ok {
				continue
			}
			seen := map[string]bool{}
			for _, p := range cfg.pairs {
				source := p.key.text
				if v, ok := p.value.(*scalar); ok && v.style != styleNull && v.text != "" {
					source = v.text
				}
				if seen[source] {
					found = true
				}
				seen[source] = true
			}
		}
	})
	return found
}
