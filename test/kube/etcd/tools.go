//go:build tools

// Package etcd pins the etcd the control-plane tests build (test/kube/build.sh).
package etcd

import _ "go.etcd.io/etcd/server/v3"
