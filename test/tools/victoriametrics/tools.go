//go:build tools

// Package victoriametrics pins the VictoriaMetrics single-node server the metric-store tests build (test/tools/build.sh).
package victoriametrics

import _ "github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics"
