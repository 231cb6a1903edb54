//go:build tools

// Package kube pins the kube-apiserver the control-plane tests build (test/kube/build.sh).
package kube

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
