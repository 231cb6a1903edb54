#!/usr/bin/env bash
# Builds the VictoriaMetrics single-node server the metric-store tests run, from its Go module at the version
# pinned in test/victoriametrics/go.mod, into a cache outside the repository; a second run with the same pin reuses
# it. Prints the directory holding the binary.
#   bash test/victoriametrics/build.sh     # build (cold: about 3 minutes on 2 cores) or reuse
#   CHURNSCOPE_VM_BIN=dir ...              # build into, and the tests read from, another directory
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "test/victoriametrics/build.sh: Go is not installed; install Go 1.26 or newer and run it again" >&2; exit 1; }
version="$(awk '/^require github.com\/VictoriaMetrics\/VictoriaMetrics /{print $3}' "$here/go.mod")"
out="${CHURNSCOPE_VM_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/churnscope/victoriametrics}"
stamp="victoria-metrics $version, $(go env GOVERSION)"
mkdir -p "$out"
if [ -x "$out/victoria-metrics" ] && [ "$(cat "$out/VERSIONS" 2>/dev/null)" = "$stamp" ]; then
  echo "$out"
  exit 0
fi
export GOFLAGS=-mod=mod CGO_ENABLED=0
started=$SECONDS
echo "test/victoriametrics/build.sh: building victoria-metrics $version" >&2
rm -f "$out/VERSIONS"
(cd "$here" && go build -trimpath -o "$out/victoria-metrics.new" github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics) ||
  { echo "test/victoriametrics/build.sh: building victoria-metrics failed (see above)" >&2; exit 1; }
mv "$out/victoria-metrics.new" "$out/victoria-metrics"
echo "$stamp" >"$out/VERSIONS"
echo "test/victoriametrics/build.sh: victoria-metrics built in $((SECONDS - started)) s" >&2
echo "$out"
