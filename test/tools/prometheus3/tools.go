//go:build tools

// Package prometheus3 pins Prometheus 3, the engine most clusters run now, which the metric-store tests build
// (test/tools/build.sh) and serve the same backfilled blocks with. Prometheus's Go module is numbered v0.3xx.y for
// release 3.xx.y.
package prometheus3

import _ "github.com/prometheus/prometheus/cmd/prometheus"
