// difffuzz: a differential fuzzer of skald's pipeline stages, with Promtail's own stages (the
// pinned Loki's clients/pkg/logentry/stages) as the oracle.
//
//	difffuzz -oracle PATH [-seed N] [-seconds S] [-max-cases N] [-report-only] ...
//	(tests/e2e/loki/diff-fuzz.sh builds and runs it)
//
// Each case is a random pipeline (a grammar of the stages skald and Promtail share) with a few
// random input lines; it runs through Promtail in-process and through skald in one long-running
// skald-stage-oracle (tests/tools/stage_oracle.cc) on a pipe. The two must agree on whether the
// config is accepted and, when it is, on every output's line, labels, timestamp, tenant and
// structured metadata (a set: Promtail's order is a Go map's), and on the drop reasons (a
// multiset). Where Promtail's output order is random (match with nested stages, multiline),
// outputs are compared in any order. Differences that pipeline_stages/README.md lists as
// deliberate are counted by reason (filters.go); any other difference is a finding: it is
// shrunk to a small case and printed, and the run exits 1 (0 with -report-only).
//
// A case is generated from (seed, index) alone: `-seed S -case I` runs case I of seed S again.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v2"
)

var (
	seedFlag       = flag.Int64("seed", 1, "seed: the same seed generates the same cases")
	secondsFlag    = flag.Float64("seconds", 60, "time budget in seconds")
	oracleFlag     = flag.String("oracle", os.Getenv("SKALD_STAGE_ORACLE"), "path of skald-stage-oracle")
	maxCasesFlag   = flag.Int("max-cases", 0, "stop after this many cases (0: only the time budget)")
	reportOnlyFlag = flag.Bool("report-only", false, "exit 0 even when there are differences")
	caseFlag       = flag.Int("case", -1, "run only the case of this index (to reproduce one)")
	maxPrintFlag   = flag.Int("max-print", 2, "findings printed in full per kind and stages of the minimal case")
	shrinkFlag     = flag.Bool("shrink", true, "shrink a finding to a small case before printing it")
	extractedFlag  = flag.Bool("extracted", false, "also compare the extracted maps of the outputs")
	verboseFlag    = flag.Bool("v", false, "print every case")
	readmeFlag     = flag.String("readme", "", "pipeline_stages/README.md: each deliberate filter's words must be there")
	tryFlag        = flag.String("try", "", "run one hand-written case and print both results: a YAML file "+
		"{stages: <yaml list as text>, inputs: [{line (or q: a Go-quoted line), labels, ts}]}")
)

// diff is one way the two results differ.
type diff struct {
	kind   string // promtail-crash, skald-crash, config-skald-refuses, config-promtail-refuses, count, line, labels, ts, tenant, sm, drops, extracted
	detail string
}

// unordered: Promtail's output order is random for this pipeline.
func unordered(c *fcase) bool {
	return hasStage(c.Stages, "multiline") || hasMatchKeep(c.Stages)
}

func hasMatchKeep(n node) bool {
	found := false
	walk(n, "", func(n node, key string) {
		if m, ok := n.(*ymap); ok && key == "match" {
			for _, p := range m.pairs {
				if p.key.text == "stages" {
					found = true
				}
			}
		}
	})
	return found
}

func sortedSM(sm [][2]string) [][2]string {
	out := append([][2]string(nil), sm...)
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}

func outputKey(o outEntry) string {
	o.SM = sortedSM(o.SM)
	return o.String()
}

// compare lists how s (skald) differs from p (Promtail); none when they agree.
func compare(c *fcase, p, s *result) []diff {
	switch {
	case p.Crash != "" || s.Crash != "":
		if p.Crash != "" && s.Crash != "" {
			return []diff{{"crash", "both crash"}}
		}
		if p.Crash != "" {
			return []diff{{"promtail-crash", p.Crash}}
		}
		return []diff{{"skald-crash", s.Crash}}
	case p.Refused != s.Refused:
		if s.Refused {
			return []diff{{"config-skald-refuses", s.Err}}
		}
		return []diff{{"config-promtail-refuses", p.Err}}
	case p.Refused:
		return nil
	}
	var diffs []diff
	pd := append([]string(nil), p.Dropped...)
	sd := append([]string(nil), s.Dropped...)
	sort.Strings(pd)
	sort.Strings(sd)
	if strings.Join(pd, ",") != strings.Join(sd, ",") {
		diffs = append(diffs, diff{"drops", fmt.Sprintf("drops %v, promtail %v", sd, pd)})
	}
	po := append([]outEntry(nil), p.Outputs...)
	so := append([]outEntry(nil), s.Outputs...)
	if len(po) != len(so) {
		return append([]diff{{"count", fmt.Sprintf("%d outputs, promtail %d", len(so), len(po))}}, diffs...)
	}
	what := "output"
	if unordered(c) {
		// Outputs as a multiset: those both sides have are left out, the rest is compared in
		// sorted order.
		left := map[string]int{}
		for _, o := range po {
			left[outputKey(o)]++
		}
		var sRest, pRest []outEntry
		for _, o := range so {
			if k := outputKey(o); left[k] > 0 {
				left[k]--
			} else {
				sRest = append(sRest, o)
			}
		}
		for _, o := range po {
			if k := outputKey(o); left[k] > 0 {
				left[k]--
				pRest = append(pRest, o)
			}
		}
		po, so = pRest, sRest
		sort.SliceStable(po, func(i, j int) bool { return outputKey(po[i]) < outputKey(po[j]) })
		sort.SliceStable(so, func(i, j int) bool { return outputKey(so[i]) < outputKey(so[j]) })
		what = "unmatched output"
	}
	var outDiffs []diff
	for i := range po {
		a, b := po[i], so[i]
		if a.Line != b.Line {
			outDiffs = append(outDiffs, diff{"line", fmt.Sprintf("%s %d line %q, promtail %q", what, i, b.Line, a.Line)})
		}
		if !reflect.DeepEqual(a.Labels, b.Labels) {
			outDiffs = append(outDiffs, diff{"labels", fmt.Sprintf("%s %d labels %v, promtail %v", what, i, b.Labels, a.Labels)})
		}
		if a.Ts != b.Ts {
			outDiffs = append(outDiffs, diff{"ts", fmt.Sprintf("%s %d ts %d, promtail %d", what, i, b.Ts, a.Ts)})
		}
		if a.Tenant != b.Tenant {
			outDiffs = append(outDiffs, diff{"tenant", fmt.Sprintf("%s %d tenant %q, promtail %q", what, i, b.Tenant, a.Tenant)})
		}
		if fmt.Sprint(sortedSM(a.SM)) != fmt.Sprint(sortedSM(b.SM)) {
			outDiffs = append(outDiffs, diff{"sm", fmt.Sprintf("%s %d sm %q, promtail %q", what, i, sortedSM(b.SM), sortedSM(a.SM))})
		}
		if *extractedFlag {
			if d := compareExtracted(a.Extracted, b.Extracted); d != "" {
				outDiffs = append(outDiffs, diff{"extracted", fmt.Sprintf("%s %d extracted: %s", what, i, d)})
			}
		}
	}
	return append(outDiffs, diffs...)
}

func compareExtracted(p, s map[string]interface{}) string {
	keys := map[string]bool{}
	for k := range p {
		keys[k] = true
	}
	for k := range s {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		pv, pok := p[k]
		sv, sok := s[k]
		switch {
		case !pok:
			out = append(out, fmt.Sprintf("%q=%#v only in skald", k, sv))
		case !sok:
			out = append(out, fmt.Sprintf("%q=%#v only in promtail", k, pv))
		case !reflect.DeepEqual(pv, sv):
			out = append(out, fmt.Sprintf("%q=%#v, promtail %#v", k, sv, pv))
		}
	}
	return strings.Join(out, "; ")
}

// verdict is the outcome of one case.
type verdict struct {
	diffs   []diff   // none: same (or deliberate)
	reasons []string // deliberate: the filters that explain the difference
	p, s    *result
}

func (v verdict) kind() string {
	if len(v.diffs) == 0 || len(v.reasons) > 0 {
		return ""
	}
	return v.diffs[0].kind
}

var (
	skaldStageInError    = regexp.MustCompile(`\(([a-z_]+)\)`)
	promtailStageInError = regexp.MustCompile(`invalid ([a-z_]+) stage config`)
)

// signature: what a shrunk case must keep of the original finding: the kinds of difference
// and, for a refused config, the stage the refusal names.
func (v verdict) signature() string {
	if v.kind() == "" {
		return ""
	}
	seen := map[string]bool{}
	var kinds []string
	for _, d := range v.diffs {
		if !seen[d.kind] {
			seen[d.kind] = true
			kinds = append(kinds, d.kind)
		}
	}
	sort.Strings(kinds)
	sig := strings.Join(kinds, "+")
	var all []string
	switch v.kind() {
	case "config-skald-refuses":
		// The innermost stage of the first problem no filter explains.
		for _, problem := range skaldProblems(v.s.Err) {
			explained := false
			for _, d := range deliberates {
				explained = explained || (d.skaldRefuses != nil && d.skaldRefuses.MatchString(problem))
			}
			if !explained {
				all = skaldStageInError.FindAllString(problem, -1)
				break
			}
		}
	case "config-promtail-refuses":
		all = promtailStageInError.FindAllString(v.p.Err, -1)
	}
	if len(all) > 0 {
		sig += " " + all[len(all)-1]
	}
	return sig
}

// classify compares the results and, when they differ, looks for deliberate differences that
// explain it.
func classify(c *fcase, p, s *result) verdict {
	v := verdict{diffs: compare(c, p, s), p: p, s: s}
	if len(v.diffs) == 0 {
		return v
	}
	if p.Crash == "" && s.Crash == "" && s.Refused && !p.Refused {
		var reasons []string
		for _, problem := range skaldProblems(s.Err) {
			explained := false
			for _, d := range deliberates {
				if d.skaldRefuses != nil && d.skaldRefuses.MatchString(problem) {
					reasons, explained = appendOnce(reasons, d.name), true
					break
				}
			}
			if !explained {
				return v
			}
		}
		v.reasons = reasons
		return v
	}
	if p.Crash == "" && s.Crash == "" && p.Refused && !s.Refused {
		for _, d := range deliberates {
			if d.promtailRefuses != nil && d.promtailRefuses(c, p) {
				v.reasons = []string{d.name}
				return v
			}
		}
		return v
	}
	if p.Crash != "" || s.Crash != "" || p.Refused {
		return v
	}
	var applicable, explaining []deliberate
	for _, d := range deliberates {
		switch {
		case d.applies == nil || !d.applies(c):
		case d.normalize != nil:
			applicable = append(applicable, d)
		case d.explains:
			explaining = append(explaining, d)
		}
	}
	sameWith := func(fs []deliberate) bool {
		pn, sn := p.clone(), s.clone()
		for _, f := range fs {
			f.normalize(c, pn, sn)
		}
		return len(compare(c, pn, sn)) == 0
	}
	if len(applicable) == 0 || !sameWith(applicable) {
		for _, f := range explaining {
			v.reasons = append(v.reasons, f.name)
		}
		return v
	}
	// The filters the difference needs: those without which it comes back.
	for i, f := range applicable {
		rest := append(append([]deliberate(nil), applicable[:i]...), applicable[i+1:]...)
		if !sameWith(rest) {
			v.reasons = append(v.reasons, f.name)
		}
	}
	if len(v.reasons) == 0 {
		for _, f := range applicable {
			if sameWith([]deliberate{f}) {
				v.reasons = []string{f.name}
				break
			}
		}
	}
	if len(v.reasons) == 0 {
		for _, f := range applicable {
			v.reasons = append(v.reasons, f.name)
		}
	}
	return v
}

func appendOnce(xs []string, x string) []string {
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	return append(xs, x)
}

// fuzzer holds the oracle and the tallies.
type fuzzer struct {
	oracle *oracle
	seed   int64
}

func (f *fuzzer) evaluate(c *fcase) verdict {
	p := runPromtail(c)
	s, err := f.oracle.run(c)
	if err != nil {
		if errors.Is(err, errOracleDead) {
			f.oracle.stop()
			o, serr := startOracle(f.oracle.path)
			if serr != nil {
				fmt.Fprintf(os.Stderr, "difffuzz: cannot restart the oracle: %v\n", serr)
				os.Exit(2)
			}
			f.oracle = o
		} else {
			s = &result{Crash: "oracle: " + err.Error()}
		}
	}
	return classify(c, p, s)
}

// shrink makes a finding's case smaller while it keeps the same kind of difference: it removes
// stages, config entries, inputs and labels, shortens lines and resets timestamps.
func (f *fuzzer) shrink(c *fcase) (*fcase, verdict) {
	best := c
	bestV := f.evaluate(c)
	want := bestV.signature()
	trials := 0
	const maxTrials = 600
	try := func(d *fcase) bool {
		if trials >= maxTrials {
			return false
		}
		trials++
		v := f.evaluate(d)
		if v.signature() == want {
			best, bestV = d, v
			return true
		}
		return false
	}
	for changed := true; changed && trials < maxTrials; {
		changed = false
		// Config: remove list items and map entries, outermost first.
		for n := 0; trials < maxTrials; {
			d := best.clone()
			if !removeNth(d.Stages, n) {
				break
			}
			if try(d) {
				changed = true
			} else {
				n++
			}
		}
		for i := 0; i < len(best.Inputs) && len(best.Inputs) > 1; {
			d := best.clone()
			d.Inputs = append(d.Inputs[:i], d.Inputs[i+1:]...)
			if try(d) {
				changed = true
			} else {
				i++
			}
		}
		for i := range best.Inputs {
			for _, k := range sortedKeys(best.Inputs[i].Labels) {
				d := best.clone()
				delete(d.Inputs[i].Labels, k)
				if try(d) {
					changed = true
				}
			}
		}
		allBase := true
		for _, in := range best.Inputs {
			allBase = allBase && in.Ts == baseTs
		}
		if !allBase {
			d := best.clone()
			for i := range d.Inputs {
				d.Inputs[i].Ts = baseTs
			}
			if try(d) {
				changed = true
			}
		}
		for i := range best.Inputs {
			for size := len(best.Inputs[i].Line) / 2; size >= 1; size /= 2 {
				for at := 0; at+size <= len(best.Inputs[i].Line) && trials < maxTrials; {
					d := best.clone()
					l := d.Inputs[i].Line
					d.Inputs[i].Line = l[:at] + l[at+size:]
					if try(d) {
						changed = true
					} else {
						at += size
					}
				}
			}
		}
	}
	return best, bestV
}

// removeNth removes the n-th removable element of the tree (a list item or a map entry, in
// walk order; not a stage's name, nor a pinned entry); false when there are fewer.
func removeNth(root node, n int) bool {
	count := 0
	var visit func(x node, stageItem bool) bool
	visit = func(x node, stageItem bool) bool {
		switch t := x.(type) {
		case *ymap:
			if !stageItem {
				for i := range t.pairs {
					if t.pairs[i].pinned {
						continue
					}
					if count == n {
						t.pairs = append(t.pairs[:i], t.pairs[i+1:]...)
						return true
					}
					count++
				}
			}
			for _, p := range t.pairs {
				if visit(p.value, false) {
					return true
				}
			}
		case *yseq:
			for i := range t.items {
				if count == n {
					t.items = append(t.items[:i], t.items[i+1:]...)
					return true
				}
				count++
			}
			for _, it := range t.items {
				if visit(it, t.stages) {
					return true
				}
			}
		}
		return false
	}
	return visit(root, false)
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// stageNames: the stage names of a pipeline in order, nested ones in brackets.
func stageNames(s *yseq) string {
	var names []string
	for _, it := range s.items {
		name := stageName(it)
		if m, ok := it.(*ymap); ok && len(m.pairs) == 1 {
			if cfg, ok := m.pairs[0].value.(*ymap); ok {
				for _, p := range cfg.pairs {
					if nested, ok := p.value.(*yseq); ok && nested.stages {
						name += "[" + stageNames(nested) + "]"
					}
				}
			}
		}
		names = append(names, name)
	}
	return strings.Join(names, ",")
}

func indent(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// checkReadme fails when a filter relies on words the README no longer has (its lines are
// wrapped: runs of white space compare as one space).
func checkReadme(path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	words := strings.Join(strings.Fields(string(data)), " ")
	for _, d := range deliberates {
		if !strings.Contains(words, strings.Join(strings.Fields(d.readme), " ")) {
			return fmt.Errorf("filter %s relies on words %s no longer has: %q", d.name, path, d.readme)
		}
	}
	return nil
}

func main() {
	flag.Parse()
	if *readmeFlag != "" {
		if err := checkReadme(*readmeFlag); err != nil {
			fmt.Fprintln(os.Stderr, "difffuzz:", err)
			os.Exit(2)
		}
	}
	if *oracleFlag == "" {
		fmt.Fprintln(os.Stderr, "difffuzz: -oracle PATH (or SKALD_STAGE_ORACLE) is required")
		os.Exit(2)
	}
	o, err := startOracle(*oracleFlag)
	if err != nil {
		fmt.Fprintf(os.Stderr, "difffuzz: cannot start %s: %v\n", *oracleFlag, err)
		os.Exit(2)
	}
	f := &fuzzer{oracle: o, seed: *seedFlag}
	defer func() { f.oracle.stop() }()
	if *tryFlag != "" {
		c, err := readTry(*tryFlag)
		if err != nil {
			fmt.Fprintf(os.Stderr, "difffuzz: %s: %v\n", *tryFlag, err)
			os.Exit(2)
		}
		v := f.evaluate(c)
		fmt.Printf("  promtail: %s\n  skald:    %s\n", v.p, v.s)
		for _, d := range v.diffs {
			fmt.Printf("  - %s: %s\n", d.kind, d.detail)
		}
		if len(v.reasons) > 0 {
			fmt.Printf("  deliberate: %s\n", strings.Join(v.reasons, ", "))
		}
		return
	}

	start := time.Now()
	budget := time.Duration(*secondsFlag * float64(time.Second))
	total, same, deliberateN, differences := 0, 0, 0, 0
	byReason := map[string]int{}
	byKind := map[string]int{}
	printedBySig := map[string]int{}
	shrunkBySig := map[string]int{}
	for i := 0; ; i++ {
		if *caseFlag >= 0 {
			if i > 0 {
				break
			}
			i = *caseFlag
		} else if (*maxCasesFlag > 0 && i >= *maxCasesFlag) || time.Since(start) >= budget {
			break
		}
		c := newCase(*seedFlag, i)
		v := f.evaluate(c)
		total++
		if *verboseFlag {
			fmt.Printf("case %d: %s\n%s%s    promtail: %s\n    skald:    %s\n", i, stageNames(c.Stages),
				indent(c.yaml(), "    ")+"\n", describeInputs(c.Inputs), v.p, v.s)
		}
		switch {
		case len(v.diffs) == 0:
			same++
			continue
		case len(v.reasons) > 0:
			deliberateN++
			for _, r := range v.reasons {
				byReason[r]++
			}
			continue
		}
		differences++
		kind := v.kind()
		// Run it twice more: a case whose outcome changes is one the generator should not make
		// (Promtail's random map order or goroutine interleaving), shown as kind "flaky".
		if again, third := f.evaluate(c), f.evaluate(c); again.signature() != v.signature() ||
			third.signature() != v.signature() {
			kind = "flaky"
		}
		byKind[kind]++
		// Print the first findings of each kind and set of stages.
		presig := kind + " " + stageNames(c.Stages)
		if printedBySig[presig] >= *maxPrintFlag || (*caseFlag < 0 && time.Since(start) >= budget) {
			continue
		}
		printedBySig[presig]++
		shown, sv := c, v
		if *shrinkFlag && kind != "flaky" {
			shown, sv = f.shrink(c)
		}
		sig := kind + " " + stageNames(shown.Stages)
		shrunkBySig[sig]++
		if shrunkBySig[sig] > *maxPrintFlag {
			continue
		}
		fmt.Printf("FINDING %s (seed %d, case %d; minimal stages: %s)\n", kind, *seedFlag, i, stageNames(shown.Stages))
		fmt.Printf("  stages:\n%s\n  inputs:\n%s", indent(shown.yaml(), "    "), describeInputs(shown.Inputs))
		fmt.Printf("  promtail: %s\n  skald:    %s\n", sv.p, sv.s)
		for _, d := range sv.diffs {
			fmt.Printf("  - %s: %s\n", d.kind, d.detail)
		}
	}
	elapsed := time.Since(start).Seconds()
	if len(shrunkBySig) > 0 {
		fmt.Println("minimal cases by kind and stages (counting the findings shrunk):")
		for _, sig := range sortedKeysInt(shrunkBySig) {
			fmt.Printf("  %4d  %s\n", shrunkBySig[sig], sig)
		}
	}
	if len(byKind) > 0 {
		var ks []string
		for _, k := range sortedKeysInt(byKind) {
			ks = append(ks, fmt.Sprintf("%s=%d", k, byKind[k]))
		}
		fmt.Printf("differences by kind: %s\n", strings.Join(ks, ", "))
	}
	var rs []string
	for _, r := range sortedKeysInt(byReason) {
		rs = append(rs, fmt.Sprintf("%s=%d", r, byReason[r]))
	}
	fmt.Printf("difffuzz: %d cases in %.0f s (seed %d): %d same, %d deliberate (by reason: %s), %d differences\n",
		total, elapsed, *seedFlag, same, deliberateN, strings.Join(rs, ", "), differences)
	if differences > 0 && !*reportOnlyFlag {
		f.oracle.stop()
		os.Exit(1)
	}
}

// readTry reads a hand-written case (-try).
func readTry(path string) (*fcase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Stages string `yaml:"stages"`
		Inputs []struct {
			Line   string            `yaml:"line"`
			Quoted string            `yaml:"q"` // the line as a Go-quoted string, as findings print it
			Labels map[string]string `yaml:"labels"`
			Ts     int64             `yaml:"ts"`
		} `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	var tree interface{}
	if err := yaml.Unmarshal([]byte(doc.Stages), &tree); err != nil {
		return nil, fmt.Errorf("stages: %v", err)
	}
	stagesTree, ok := toNode(tree, "").(*yseq)
	if !ok {
		stagesTree = &yseq{}
	}
	stagesTree.stages = true
	c := &fcase{Stages: stagesTree, raw: doc.Stages}
	for _, in := range doc.Inputs {
		ts := in.Ts
		if ts == 0 {
			ts = baseTs
		}
		line := in.Line
		if in.Quoted != "" {
			if line, err = strconv.Unquote(in.Quoted); err != nil {
				return nil, fmt.Errorf("q: %s: %v", in.Quoted, err)
			}
		}
		c.Inputs = append(c.Inputs, input{Line: line, Labels: in.Labels, Ts: ts})
	}
	return c, nil
}

// toNode turns a value yaml.v2 read into the generator's tree (for the filters of -try).
func toNode(v interface{}, key string) node {
	switch x := v.(type) {
	case map[interface{}]interface{}:
		m := &ymap{}
		var keys []string
		vals := map[string]interface{}{}
		for k, val := range x {
			ks := fmt.Sprint(k)
			keys = append(keys, ks)
			vals[ks] = val
		}
		sort.Strings(keys)
		for _, k := range keys {
			m.add(k, toNode(vals[k], k))
		}
		return m
	case []interface{}:
		s := &yseq{stages: key == "stages"}
		for _, it := range x {
			s.items = append(s.items, toNode(it, ""))
		}
		return s
	case nil:
		return nullScalar()
	}
	return str(fmt.Sprint(v))
}

func sortedKeysInt(m map[string]int) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
