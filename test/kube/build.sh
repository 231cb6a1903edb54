#!/usr/bin/env bash
# Builds the real control plane the control-plane tests run: kube-apiserver and etcd, from their Go
# modules at the versions pinned in test/kube/*/go.mod (and the Gateway API's HTTPRoute CRD), crilog, which writes
# a log through containerd's own container-log writer, apiload, a controller and its node agents on real client-go
# informers, and connectorctl, network-services-operator's connector controller as it really behaves and agents whose
# lease renewals stop on a schedule, into a cache outside the repository. A second
# run with the same pins reuses the build. Prints the directory holding the binaries.
#   bash test/kube/build.sh            # build (cold: about 6 minutes on 2 cores) or reuse
#   CHURNSCOPE_KUBE_BIN=dir ...        # build into, and the tests read from, another directory
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v go >/dev/null || { echo "test/kube/build.sh: Go is not installed; install Go 1.25 or newer (https://go.dev/dl) and run it again" >&2; exit 1; }

kube_version="$(awk '/^require k8s.io\/kubernetes /{print $3}' "$here/apiserver/go.mod")"
gateway_api_version=v1.6.3 # the real HTTPRoute CRD, from the Gateway API module
etcd_version="$(awk '/^require go.etcd.io\/etcd\/server\/v3 /{print $3}' "$here/etcd/go.mod")"
containerd_version="$(awk '$1 == "github.com/containerd/containerd" {print $2; exit}' "$here/crilog/go.mod")"
out="${CHURNSCOPE_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/churnscope/kube}"
stamp="kube-apiserver $kube_version, etcd $etcd_version, gateway-api $gateway_api_version, containerd $containerd_version, crilog $(cat "$here/crilog/main.go" "$here/crilog/go.mod" | sha256sum | cut -c1-12), apiload $(cat "$here/apiload/main.go" "$here/apiload/go.mod" | sha256sum | cut -c1-12), connectorctl $(cat "$here/connectorctl/main.go" "$here/connectorctl/go.mod" | sha256sum | cut -c1-12), $(go env GOVERSION)"
mkdir -p "$out"

if [ -x "$out/kube-apiserver" ] && [ -x "$out/etcd" ] && [ -x "$out/crilog" ] && [ -x "$out/apiload" ] && [ -x "$out/connectorctl" ] && [ -f "$out/httproutes.crd.yaml" ] && [ "$(cat "$out/VERSIONS" 2>/dev/null)" = "$stamp" ]; then
  echo "$out"
  exit 0
fi

export GOFLAGS=-mod=mod CGO_ENABLED=0
build() { # module dir, package, binary
  local started=$SECONDS
  echo "test/kube/build.sh: building $3 ($1)" >&2
  (cd "$here/$1" && go build -trimpath -o "$out/$3.new" "$2") || { echo "test/kube/build.sh: building $3 failed (see above)" >&2; exit 1; }
  mv "$out/$3.new" "$out/$3"
  echo "test/kube/build.sh: $3 built in $((SECONDS - started)) s" >&2
}
rm -f "$out/VERSIONS"
build etcd go.etcd.io/etcd/server/v3 etcd
build apiserver k8s.io/kubernetes/cmd/kube-apiserver kube-apiserver
build crilog . crilog
build apiload . apiload
build connectorctl . connectorctl
gateway_dir="$(cd "${TMPDIR:-/tmp}" && go mod download -json "sigs.k8s.io/gateway-api@$gateway_api_version" | awk -F'"' '/"Dir":/{print $4}')"
install -m 0644 "$gateway_dir/config/crd/standard/gateway.networking.k8s.io_httproutes.yaml" "$out/httproutes.crd.yaml" || { echo "test/kube/build.sh: no HTTPRoute CRD in sigs.k8s.io/gateway-api@$gateway_api_version" >&2; exit 1; }
echo "$stamp" >"$out/VERSIONS"
echo "$out"
