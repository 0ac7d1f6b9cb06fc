//go:build tools

// Package tools pins k8s.io/kubernetes/cmd/kube-apiserver in this module's graph; the
// binary is built straight from that package (go build k8s.io/kubernetes/cmd/kube-apiserver).
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
