// corpuscheck: runs skald's pipeline-stage corpus through Promtail's own stages and prints
// where Promtail's output differs from the case's expectation.
//
//	corpuscheck GEOIP_DIR CORPUS_DIR_OR_FILE...   (tests/e2e/loki/check-corpus.sh builds and runs it)
//
// A case's `promtail:` block (expect, dropped, error), where present, is what Promtail is
// expected to do instead: the case is one where skald deliberately differs (its `differs:`
// says why). Exits 1 when a case's outcome differs.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	"gopkg.in/yaml.v2"

	"github.com/grafana/loki/v3/clients/pkg/logentry/stages"
	"github.com/grafana/loki/v3/clients/pkg/promtail/api"
	"github.com/grafana/loki/v3/pkg/logproto"
)

type corpusCase struct {
	Name         string                   `yaml:"name"`
	Stages       string                   `yaml:"stages"`
	Input        map[string]interface{}   `yaml:"input"`
	Inputs       []map[string]interface{} `yaml:"inputs"`
	Expect       []map[string]interface{} `yaml:"expect"`
	Dropped      []string                 `yaml:"dropped"`
	Error        []string                 `yaml:"error"`
	NoFinalFlush bool                     `yaml:"no_final_flush"`
	Promtail     *struct {
		Expect  []map[string]interface{} `yaml:"expect"`
		Dropped []string                 `yaml:"dropped"`
		Error   []string                 `yaml:"error"`
		// Promtail panics on this config (the case shows skald refusing it instead).
		Panics bool `yaml:"panics"`
		// Promtail's output order is random here (a goroutine per label set, or match letting
		// the entries it does not take overtake): outputs are compared in any order.
		Unordered bool `yaml:"unordered"`
		// Promtail cannot run the case in a test's time (why); it is listed as skipped.
		Skip string `yaml:"skip"`
	} `yaml:"promtail"`
	Differs string `yaml:"differs"`
}

// plain turns YAML's map[interface{}]interface{} into JSON's shapes, so that an expected value
// and an extracted one compare as JSON values (numbers as float64).
func plain(v interface{}) interface{} {
	b, err := json.Marshal(yamlToJSON(v))
	if err != nil {
		return fmt.Sprintf("unencodable %T", v)
	}
	var out interface{}
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Sprintf("undecodable %s", b)
	}
	return out
}

func yamlToJSON(v interface{}) interface{} {
	switch x := v.(type) {
	case map[interface{}]interface{}:
		m := map[string]interface{}{}
		for k, val := range x {
			m[str(k)] = yamlToJSON(val)
		}
		return m
	case map[string]interface{}:
		m := map[string]interface{}{}
		for k, val := range x {
			m[k] = yamlToJSON(val)
		}
		return m
	case []interface{}:
		l := make([]interface{}, len(x))
		for i, val := range x {
			l[i] = yamlToJSON(val)
		}
		return l
	}
	return v
}

const defaultTs = int64(1_700_000_000_000_000_000)

func str(v interface{}) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func labelsOf(v interface{}) model.LabelSet {
	ls := model.LabelSet{}
	if m, ok := v.(map[interface{}]interface{}); ok {
		for k, val := range m {
			ls[model.LabelName(str(k))] = model.LabelValue(str(val))
		}
	}
	return ls
}

func toInt(v interface{}) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int64:
		return x
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	}
	return 0
}

type out struct {
	line, tenant string
	labels       model.LabelSet
	ts           int64
	sm           []string
	extracted    map[string]interface{}
}

func (o out) String() string {
	return fmt.Sprintf("line=%q labels=%v ts=%d tenant=%q sm=%v", o.line, o.labels, o.ts, o.tenant, o.sm)
}

// timeDependent: cases whose outcome depends on skald's fake clock (Promtail reads time.Now).
func timeDependent(c corpusCase) bool {
	for _, inp := range append([]map[string]interface{}{c.Input}, c.Inputs...) {
		if _, ok := inp["now"]; ok {
			return true
		}
		if _, ok := inp["flush"]; ok {
			return true
		}
	}
	for _, s := range []string{"older_than", "limit:", "sampling:"} {
		if strings.Contains(c.Stages, s) {
			return true
		}
	}
	return strings.Contains(c.Stages, "pack:") && !strings.Contains(c.Stages, "ingest_timestamp: false")
}

func run(c corpusCase, geoipDir string) (msg string, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			if c.Promtail != nil && c.Promtail.Panics {
				msg, ok = "", true
				return
			}
			msg, ok = fmt.Sprintf("promtail PANICS: %v", r), false
		}
	}()
	text := strings.ReplaceAll(c.Stages, "@GEOIP_DIR@", geoipDir)
	var cfg []interface{}
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		if len(c.Error) > 0 {
			return "", true
		}
		return "yaml: " + err.Error(), false
	}
	reg := prometheus.NewRegistry()
	job := "corpus"
	p, err := stages.NewPipeline(log.NewNopLogger(), cfg, &job, reg)
	if len(c.Error) > 0 {
		if err == nil {
			return "promtail ACCEPTS a config skald refuses (" + strings.Join(c.Error, " | ") + ")", false
		}
		return "", true
	}
	if err != nil {
		return "promtail REFUSES: " + err.Error(), false
	}
	inputs := c.Inputs
	if c.Input != nil {
		inputs = append([]map[string]interface{}{c.Input}, inputs...)
	}
	var firstLabels model.LabelSet
	firstTs := defaultTs
	in := make(chan stages.Entry)
	outCh := p.Run(in)
	var entries []stages.Entry
	for i, inp := range inputs {
		if _, ok := inp["flush"]; ok {
			continue
		}
		ts := defaultTs
		if v, ok := inp["timestamp"]; ok {
			ts = toInt(v)
		}
		ls := labelsOf(inp["labels"])
		if i == 0 || firstLabels == nil {
			firstLabels = ls.Clone()
			firstTs = ts
		}
		extracted := map[string]interface{}{}
		if m, ok := yamlToJSON(inp["extracted"]).(map[string]interface{}); ok {
			extracted = m
		}
		entries = append(entries, stages.Entry{Extracted: extracted,
			Entry: api.Entry{Labels: ls, Entry: logproto.Entry{Timestamp: time.Unix(0, ts), Line: str(inp["line"])}}})
	}
	go func() {
		for _, e := range entries {
			in <- e
		}
		close(in)
	}()
	var got []out
	timeout := time.After(20 * time.Second)
loop:
	for {
		select {
		case e, ok := <-outCh:
			if !ok {
				break loop
			}
			o := out{line: e.Line, labels: model.LabelSet{}, ts: e.Timestamp.UnixNano(), extracted: e.Extracted}
			for k, v := range e.Labels {
				if k == "__tenant_id__" {
					o.tenant = string(v)
					continue
				}
				if v == "" {
					continue // Loki reads an empty value as no label (syntax.ParseLabels)
				}
				o.labels[k] = v
			}
			for _, m := range e.StructuredMetadata {
				o.sm = append(o.sm, m.Name+"="+m.Value)
			}
			sort.Strings(o.sm) // Promtail's order is a Go map's
			got = append(got, o)
		case <-timeout:
			return "promtail did not finish", false
		}
	}
	if c.Promtail != nil && c.Promtail.Panics {
		return "promtail did not panic", false
	}
	// Where Promtail's order is random, both lists are put in one order before comparing:
	// match runs its nested stages beside the entries it does not take, which may overtake
	// (any order); multiline runs a goroutine per label set (order kept within a label set).
	wantLabels := func(x map[string]interface{}) model.LabelSet {
		if v, ok := x["labels"]; ok {
			return labelsOf(v)
		}
		return firstLabels
	}
	switch {
	case (c.Promtail != nil && c.Promtail.Unordered) || strings.Contains(c.Stages, "match:"):
		gotKey := func(o out) string { return o.labels.String() + "\x00" + o.line }
		wantKey := func(x map[string]interface{}) string { return wantLabels(x).String() + "\x00" + str(x["line"]) }
		sort.SliceStable(got, func(i, j int) bool { return gotKey(got[i]) < gotKey(got[j]) })
		sort.SliceStable(c.Expect, func(i, j int) bool { return wantKey(c.Expect[i]) < wantKey(c.Expect[j]) })
	case strings.Contains(c.Stages, "multiline:"):
		sort.SliceStable(got, func(i, j int) bool { return got[i].labels.String() < got[j].labels.String() })
		sort.SliceStable(c.Expect, func(i, j int) bool {
			return wantLabels(c.Expect[i]).String() < wantLabels(c.Expect[j]).String()
		})
	}
	var diffs []string
	if len(got) != len(c.Expect) {
		diffs = append(diffs, fmt.Sprintf("%d outputs, expected %d", len(got), len(c.Expect)))
	}
	for i := 0; i < len(got) && i < len(c.Expect); i++ {
		x := c.Expect[i]
		g := got[i]
		if v, ok := x["line"]; ok && str(v) != g.line {
			diffs = append(diffs, fmt.Sprintf("output %d line %q, expected %q", i, g.line, str(v)))
		}
		want := firstLabels
		if v, ok := x["labels"]; ok {
			want = labelsOf(v)
		}
		if !want.Equal(g.labels) {
			diffs = append(diffs, fmt.Sprintf("output %d labels %v, expected %v", i, g.labels, want))
		}
		wts := firstTs
		if v, ok := x["timestamp"]; ok {
			wts = toInt(v)
		}
		if wts != g.ts {
			diffs = append(diffs, fmt.Sprintf("output %d timestamp %d, expected %d", i, g.ts, wts))
		}
		if str(x["tenant"]) != g.tenant {
			diffs = append(diffs, fmt.Sprintf("output %d tenant %q, expected %q", i, g.tenant, str(x["tenant"])))
		}
		var wsm []string
		if l, ok := x["structured_metadata"].([]interface{}); ok {
			for _, p := range l {
				pp := p.([]interface{})
				wsm = append(wsm, str(pp[0])+"="+str(pp[1]))
			}
		}
		sort.Strings(wsm)
		if strings.Join(wsm, ",") != strings.Join(g.sm, ",") {
			diffs = append(diffs, fmt.Sprintf("output %d structured metadata %v, expected %v", i, g.sm, wsm))
		}
		if m, ok := yamlToJSON(x["extracted"]).(map[string]interface{}); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				gv, present := g.extracted[k]
				if !present {
					diffs = append(diffs, fmt.Sprintf("output %d extracted %q missing, expected %v", i, k, plain(m[k])))
				} else if !reflect.DeepEqual(plain(gv), plain(m[k])) {
					diffs = append(diffs, fmt.Sprintf("output %d extracted %q = %#v, expected %#v", i, k, plain(gv), plain(m[k])))
				}
			}
		}
	}
	// Drops by reason, from Promtail's counter.
	var drops []string
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "logentry_dropped_lines_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			reason := ""
			for _, l := range m.GetLabel() {
				if l.GetName() == "reason" {
					reason = l.GetValue()
				}
			}
			for n := 0; n < int(m.GetCounter().GetValue()); n++ {
				drops = append(drops, reason)
			}
		}
	}
	want := append([]string(nil), c.Dropped...)
	sort.Strings(want)
	sort.Strings(drops)
	if strings.Join(want, ",") != strings.Join(drops, ",") {
		diffs = append(diffs, fmt.Sprintf("drops %v, expected %v", drops, want))
	}
	if len(diffs) > 0 {
		var all []string
		for _, g := range got {
			all = append(all, "      "+g.String())
		}
		return strings.Join(diffs, "; ") + "\n    promtail:\n" + strings.Join(all, "\n"), false
	}
	return "", true
}

var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(`)

// inventoryMismatch compares a peer file's list of tests with the Go test functions of its
// source in the Loki module (LOKI_SRC); "" when they are the same, in the same order.
func inventoryMismatch(sourceFile string, listed []string) string {
	root := os.Getenv("LOKI_SRC")
	if root == "" {
		return ""
	}
	src, err := os.ReadFile(filepath.Join(root, sourceFile))
	if err != nil {
		return "source_file: " + err.Error()
	}
	var funcs []string
	for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
		funcs = append(funcs, m[1])
	}
	if strings.Join(funcs, " ") != strings.Join(listed, " ") {
		return fmt.Sprintf("tests: lists %v; %s has %v", listed, sourceFile, funcs)
	}
	return ""
}

func main() {
	geoipDir := os.Args[1]
	var files []string
	for _, arg := range os.Args[2:] {
		if st, err := os.Stat(arg); err == nil && st.IsDir() {
			found, _ := filepath.Glob(filepath.Join(arg, "*.yaml"))
			sort.Strings(found)
			files = append(files, found...)
		} else {
			files = append(files, arg)
		}
	}
	total, same, deliberate, skipped, inventoryBad := 0, 0, 0, 0, 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var doc struct {
			SourceFile string `yaml:"source_file"`
			Tests      []struct {
				Test string `yaml:"test"`
				Fate string `yaml:"fate"`
			} `yaml:"tests"`
			Cases []corpusCase `yaml:"cases"`
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			panic(f + ": " + err.Error())
		}
		if doc.SourceFile != "" {
			var listed []string
			for _, t := range doc.Tests {
				listed = append(listed, t.Test)
			}
			if msg := inventoryMismatch(doc.SourceFile, listed); msg != "" {
				fmt.Printf("%s: %s\n", filepath.Base(f), msg)
				inventoryBad++
			}
		}
		for _, c := range doc.Cases {
			total++
			if c.Promtail != nil {
				if c.Differs == "" {
					fmt.Printf("%s: %s\n    a promtail: block needs differs: (why skald differs)\n", filepath.Base(f), c.Name)
					continue
				}
				deliberate++
				if c.Promtail.Skip != "" {
					fmt.Printf("%s: %s\n    SKIPPED (%s)\n", filepath.Base(f), c.Name, c.Promtail.Skip)
					skipped++
					continue
				}
				c.Expect, c.Dropped, c.Error = c.Promtail.Expect, c.Promtail.Dropped, c.Promtail.Error
			}
			if len(c.Error) == 0 && timeDependent(c) {
				fmt.Printf("%s: %s\n    SKIPPED (depends on the clock)\n", filepath.Base(f), c.Name)
				skipped++
				continue
			}
			msg, ok := run(c, geoipDir)
			if ok {
				same++
				continue
			}
			fmt.Printf("%s: %s\n    %s\n", filepath.Base(f), c.Name, msg)
		}
	}
	fmt.Printf("%d of %d cases as Promtail (%d of them where skald deliberately differs), %d skipped\n",
		same, total, deliberate, skipped)
	if same+skipped != total || inventoryBad > 0 {
		os.Exit(1)
	}
}
