// urloracle prints what Go's net/url makes of each input (a JSON string per stdin line): the
// fields sprig's urlParse returns, URL.String(), and the URL sprig's urlJoin would build from those
// fields. tests/pipeline_stages/go/go_url_cases.jsonl is its answer to every string literal of
// Go's src/net/url/url_test.go and a few more (see go_url_test.cc).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var in string
		if err := json.Unmarshal(sc.Bytes(), &in); err != nil {
			panic(err)
		}
		u, err := url.Parse(in)
		out := map[string]interface{}{"in": in}
		if err != nil {
			out["error"] = err.Error()
		} else {
			ui := ""
			if u.User != nil {
				ui = u.User.String()
			}
			out["scheme"], out["host"], out["hostname"], out["path"] = u.Scheme, u.Host, u.Hostname(), u.Path
			out["query"], out["opaque"], out["fragment"], out["userinfo"] = u.RawQuery, u.Opaque, u.Fragment, ui
			out["string"] = u.String()
			j := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery, Opaque: u.Opaque, Fragment: u.Fragment, User: u.User}
			out["joined"] = j.String()
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
	}
}
