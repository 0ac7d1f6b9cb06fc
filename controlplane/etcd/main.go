// Command etcd is etcd's server, as go.etcd.io/etcd/v3's main.go: it hands the command line
// to etcdmain.Main.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
