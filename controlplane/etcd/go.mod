// A wrapper main for etcd: go.etcd.io/etcd's own main module uses replace directives for its
// sibling modules, so it cannot be built with `go install ...@version`. This module requires
// server/v3 and its siblings at one version. Build: scripts/build-control-plane.
module reconcile-kit.local/controlplane/etcd

go 1.22

require (
	go.etcd.io/etcd/api/v3 v3.5.16
	go.etcd.io/etcd/client/pkg/v3 v3.5.16
	go.etcd.io/etcd/client/v2 v2.305.16
	go.etcd.io/etcd/client/v3 v3.5.16
	go.etcd.io/etcd/pkg/v3 v3.5.16
	go.etcd.io/etcd/raft/v3 v3.5.16
	go.etcd.io/etcd/server/v3 v3.5.16
)
