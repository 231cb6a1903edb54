//go:build tools

// Package thanos pins Thanos (sidecar and query), which the metric-store tests build (test/tools/build.sh). v0.42.0 is
// the newest release whose go.mod this machine's Go (1.26.8) accepts: v0.42.1 and later ask for 1.26.10.
package thanos

import _ "github.com/thanos-io/thanos/cmd/thanos"
