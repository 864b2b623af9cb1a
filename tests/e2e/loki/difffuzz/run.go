package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
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

// outEntry is one entry that left a pipeline.
type outEntry struct {
	Line      string
	Labels    map[string]string
	Ts        int64
	Tenant    string
	SM        [][2]string
	Extracted map[string]interface{} // nil, bool, float64, string
}

// result is what one side did with a case.
type result struct {
	Refused bool   // the config was refused (Err says why)
	Err     string // refusal message
	Crash   string // a panic (Promtail), a non-config exception or a dead/hung oracle (skald)
	Outputs []outEntry
	Dropped []string
}

func (r *result) clone() *result {
	c := *r
	c.Outputs = nil
	for _, o := range r.Outputs {
		d := o
		d.Labels = map[string]string{}
		for k, v := range o.Labels {
			d.Labels[k] = v
		}
		d.SM = append([][2]string(nil), o.SM...)
		c.Outputs = append(c.Outputs, d)
	}
	c.Dropped = append([]string(nil), r.Dropped...)
	return &c
}

func (o outEntry) String() string {
	keys := make([]string, 0, len(o.Labels))
	for k := range o.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ls []string
	for _, k := range keys {
		ls = append(ls, fmt.Sprintf("%s=%q", k, o.Labels[k]))
	}
	var sm []string
	for _, p := range o.SM {
		sm = append(sm, fmt.Sprintf("%s=%q", p[0], p[1]))
	}
	return fmt.Sprintf("line=%q labels={%s} ts=%d tenant=%q sm=[%s]", o.Line, strings.Join(ls, ", "), o.Ts,
		o.Tenant, strings.Join(sm, " "))
}

func (r *result) String() string {
	switch {
	case r.Crash != "":
		return "CRASH: " + r.Crash
	case r.Refused:
		return "refused: " + r.Err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d outputs, dropped %v", len(r.Outputs), r.Dropped)
	for _, o := range r.Outputs {
		b.WriteString("\n      " + o.String())
	}
	return b.String()
}

// ---- Promtail ----

// runPromtail runs a case through Promtail's own stages (the pinned Loki), as corpuscheck does.
func runPromtail(c *fcase) (res *result) {
	defer func() {
		if r := recover(); r != nil {
			res = &result{Crash: fmt.Sprintf("panic: %v", r)}
		}
	}()
	var cfg []interface{}
	if err := yaml.Unmarshal([]byte(c.yaml()), &cfg); err != nil {
		return &result{Refused: true, Err: "yaml: " + err.Error()}
	}
	reg := prometheus.NewRegistry()
	job := "difffuzz"
	p, err := stages.NewPipeline(log.NewNopLogger(), cfg, &job, reg)
	if err != nil {
		return &result{Refused: true, Err: err.Error()}
	}
	in := make(chan stages.Entry)
	outCh := p.Run(in)
	go func() {
		for _, inp := range c.Inputs {
			ls := model.LabelSet{}
			for k, v := range inp.Labels {
				ls[model.LabelName(k)] = model.LabelValue(v)
			}
			in <- stages.Entry{Extracted: map[string]interface{}{},
				Entry: api.Entry{Labels: ls, Entry: logproto.Entry{Timestamp: time.Unix(0, inp.Ts), Line: inp.Line}}}
		}
		close(in)
	}()
	res = &result{}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-outCh:
			if !ok {
				res.Dropped = promtailDrops(reg)
				return res
			}
			o := outEntry{Line: e.Line, Labels: map[string]string{}, Ts: e.Timestamp.UnixNano(), Extracted: e.Extracted}
			for k, v := range e.Labels {
				if k == "__tenant_id__" {
					o.Tenant = string(v)
					continue
				}
				o.Labels[string(k)] = string(v)
			}
			for _, m := range e.StructuredMetadata {
				o.SM = append(o.SM, [2]string{m.Name, m.Value})
			}
			res.Outputs = append(res.Outputs, o)
		case <-timeout:
			return &result{Crash: "promtail did not finish in 20 s"}
		}
	}
}

// promtailDrops: one reason per dropped entry, from Promtail's counter.
func promtailDrops(reg *prometheus.Registry) []string {
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
	return drops
}

// ---- skald (the skald-stage-oracle subprocess) ----

// oracle is one long-running skald-stage-oracle: a case per line on its stdin, an answer per
// line on its stdout.
type oracle struct {
	path    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	answers chan []byte
}

func startOracle(path string) (*oracle, error) {
	o := &oracle{path: path}
	o.cmd = exec.Command(path)
	o.cmd.Stderr = os.Stderr
	var err error
	if o.stdin, err = o.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := o.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := o.cmd.Start(); err != nil {
		return nil, err
	}
	o.answers = make(chan []byte)
	go func(ch chan []byte) {
		defer close(ch)
		rd := bufio.NewReaderSize(stdout, 1<<20)
		for {
			line, err := rd.ReadBytes('\n')
			if len(line) > 0 && err == nil {
				ch <- line
			}
			if err != nil {
				return
			}
		}
	}(o.answers)
	return o, nil
}

func (o *oracle) stop() {
	_ = o.stdin.Close()
	_ = o.cmd.Process.Kill()
	_ = o.cmd.Wait()
}

type wireInput struct {
	Line   string            `json:"line"`
	Labels map[string]string `json:"labels"`
	Ts     int64             `json:"ts"`
}

type wireCase struct {
	Stages string      `json:"stages"`
	Inputs []wireInput `json:"inputs"`
}

type wireEntry struct {
	Line      string                     `json:"line"`
	Labels    map[string]string          `json:"labels"`
	Ts        json.Number                `json:"ts"`
	Tenant    string                     `json:"tenant"`
	SM        [][2]string                `json:"sm"`
	Extracted map[string]json.RawMessage `json:"extracted"`
}

type wireAnswer struct {
	Error   *string     `json:"error"`
	Crash   *string     `json:"crash"`
	Outputs []wireEntry `json:"outputs"`
	Dropped []string    `json:"dropped"`
}

var b64 = base64.StdEncoding

func unb64(s string) string {
	b, err := b64.DecodeString(s)
	if err != nil {
		return "<bad base64 " + s + ">"
	}
	return string(b)
}

// errOracleDead: the oracle exited or did not answer; the caller restarts it.
var errOracleDead = errors.New("oracle died")

// run sends a case and reads the answer (at most 20 s).
func (o *oracle) run(c *fcase) (*result, error) {
	wc := wireCase{Stages: c.yaml()}
	for _, in := range c.Inputs {
		ls := map[string]string{}
		for k, v := range in.Labels {
			ls[k] = b64.EncodeToString([]byte(v))
		}
		wc.Inputs = append(wc.Inputs, wireInput{Line: b64.EncodeToString([]byte(in.Line)), Labels: ls, Ts: in.Ts})
	}
	req, err := json.Marshal(wc)
	if err != nil {
		return nil, err
	}
	if _, err := o.stdin.Write(append(req, '\n')); err != nil {
		return &result{Crash: "oracle: write: " + err.Error()}, errOracleDead
	}
	var line []byte
	select {
	case l, ok := <-o.answers:
		if !ok {
			state := "exited"
			if err := o.cmd.Wait(); err != nil {
				state = err.Error()
			}
			return &result{Crash: "skald-stage-oracle died: " + state}, errOracleDead
		}
		line = l
	case <-time.After(20 * time.Second):
		return &result{Crash: "skald-stage-oracle did not answer in 20 s"}, errOracleDead
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var a wireAnswer
	if err := dec.Decode(&a); err != nil {
		return &result{Crash: "oracle answer: " + err.Error() + ": " + string(line)}, nil
	}
	switch {
	case a.Crash != nil:
		return &result{Crash: *a.Crash}, nil
	case a.Error != nil:
		return &result{Refused: true, Err: *a.Error}, nil
	}
	res := &result{Dropped: a.Dropped}
	for _, w := range a.Outputs {
		ts, _ := w.Ts.Int64()
		e := outEntry{Line: unb64(w.Line), Labels: map[string]string{}, Ts: ts, Tenant: unb64(w.Tenant),
			Extracted: map[string]interface{}{}}
		for k, v := range w.Labels {
			e.Labels[k] = unb64(v)
		}
		for _, p := range w.SM {
			e.SM = append(e.SM, [2]string{unb64(p[0]), unb64(p[1])})
		}
		for k, raw := range w.Extracted {
			e.Extracted[k] = wireValue(raw)
		}
		res.Outputs = append(res.Outputs, e)
	}
	return res, nil
}

// wireValue: an extracted value of the oracle's answer as Promtail's map holds one.
func wireValue(raw json.RawMessage) interface{} {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v interface{}
	if err := dec.Decode(&v); err != nil {
		return "<undecodable>"
	}
	switch x := v.(type) {
	case json.Number:
		f, _ := x.Float64()
		return f
	case map[string]interface{}:
		if s, ok := x["s"].(string); ok {
			return unb64(s)
		}
	}
	return v
}
