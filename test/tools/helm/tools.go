//go:build tools

// Package helm pins the helm the chart tests build (test/tools/build.sh).
package helm

import _ "helm.sh/helm/v4/cmd/helm"
