//go:build tools

// Package lokitools only exists to record, in go.mod/go.sum, every module
// needed to build the pinned Loki binaries. It is never compiled normally.
package lokitools

import (
	_ "github.com/grafana/loki/v3/clients/cmd/docker-driver"
	_ "github.com/grafana/loki/v3/cmd/loki"
)
