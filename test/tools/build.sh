#!/usr/bin/env bash
# Builds the tools the tests run besides the control plane (test/kube/build.sh): VictoriaMetrics single-node, Thanos,
# Prometheus 3, helm and Versity Gateway (an S3 server),
# each from its Go module at the version pinned in test/tools/<tool>/go.mod, into a cache outside the repository; a
# second run with the same pins reuses them. Prints the directory holding the binaries.
#   bash test/tools/build.sh           # build (cold: about 5 minutes on 2 cores) or reuse
#   CHURNSCOPE_TOOLS_BIN=dir ...       # build into, and the tests read from, another directory
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "test/tools/build.sh: Go is not installed; install Go 1.26 or newer and run it again" >&2; exit 1; }
out="${CHURNSCOPE_TOOLS_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/churnscope/tools}"
mkdir -p "$out"
export GOFLAGS=-mod=mod CGO_ENABLED=0

build() { # tool dir, module, package, binary, [the Go package whose Version the build stamps], [build tags]
  local version stamp started=$SECONDS
  version="$(awk -v m="$2" '$1 == "require" && $2 == m {print $3}' "$here/$1/go.mod")"
  stamp="$4 $version${6:+ (tags $6)}, $(go env GOVERSION)"
  if [ -x "$out/$4" ] && [ "$(cat "$out/$4.version" 2>/dev/null)" = "$stamp" ]; then return; fi
  echo "test/tools/build.sh: building $4 $version" >&2
  rm -f "$out/$4.version"
  (cd "$here/$1" && go build -trimpath ${5:+-ldflags "-X $5.Version=${version#v}"} ${6:+-tags "$6"} -o "$out/$4.new" "$3") || { echo "test/tools/build.sh: building $4 failed (see above)" >&2; exit 1; }
  mv "$out/$4.new" "$out/$4"
  echo "$stamp" >"$out/$4.version"
  echo "test/tools/build.sh: $4 built in $((SECONDS - started)) s" >&2
}
build victoriametrics github.com/VictoriaMetrics/VictoriaMetrics github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics victoria-metrics
# Thanos's own build tags (its .promu.yml): its gRPC codec reads Prometheus's labels as a slice, and panics on any other layout.
build thanos github.com/thanos-io/thanos github.com/thanos-io/thanos/cmd/thanos thanos github.com/prometheus/common/version netgo,slicelabels
# Prometheus 3 without its service discoveries (remove_all_sd, its own build tag): the tests only read backfilled blocks.
build prometheus3 github.com/prometheus/prometheus github.com/prometheus/prometheus/cmd/prometheus prometheus-3 "" remove_all_sd
build helm helm.sh/helm/v4 helm.sh/helm/v4/cmd/helm helm
build versitygw github.com/versity/versitygw github.com/versity/versitygw/cmd/versitygw versitygw
echo "$out"
