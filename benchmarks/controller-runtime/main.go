// Command widget-controller is benchmarks/run.py's controller-runtime contender: the same
// workload as reconcile_kit's converge scenario, written as a controller-runtime user would.
//
// It watches the benchmark's Widgets (bench.reconcile-kit.io/v1, unstructured; with -typed,
// Go structs: typed.go) in one namespace and reads them from the manager's cache
// (CacheOptions.Unstructured), with GenerationChangedPredicate, MaxConcurrentReconciles
// = -concurrency, and writes a Ready condition with one merge PATCH of the status subresource
// (client.MergeFrom), as reconcile_kit's PatchHelper does. No metrics server, no probes, no
// leader election. It runs until it receives SIGTERM or SIGINT; benchmarks/run.py reads its
// CPU time and RSS from /proc before stopping it. With -probe, each reconcile prints
// "reconcile <name> <spec.seq> <unix nanoseconds>" once it holds the object
// (benchmarks/latency_processes.py: change-to-reconcile latency).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

var widgetGVK = schema.GroupVersionKind{Group: "bench.reconcile-kit.io", Version: "v1", Kind: "Widget"}

type reconciler struct {
	client client.Client
}

var probe = flag.Bool("probe", false, "print a line per reconcile: name, spec.seq, time")

// started prints the probe line of a reconcile holding the object (-probe).
func started(name string, seq int64) {
	if *probe {
		fmt.Printf("reconcile %s %d %d\n", name, seq, time.Now().UnixNano())
	}
}

func (r *reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(widgetGVK)
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	seq, _, _ := unstructured.NestedInt64(obj.Object, "spec", "seq")
	started(req.Name, seq)
	before := obj.DeepCopy()
	conditions := []metav1.Condition{}
	if raw, found, _ := unstructured.NestedSlice(obj.Object, "status", "conditions"); found {
		for _, item := range raw {
			if m, ok := item.(map[string]any); ok {
				var c metav1.Condition
				if runtime.DefaultUnstructuredConverter.FromUnstructured(m, &c) == nil {
					conditions = append(conditions, c)
				}
			}
		}
	}
	meta.SetStatusCondition(&conditions, metav1.Condition{
		Type: "Ready", Status: metav1.ConditionTrue, Reason: "Reconciled", Message: "bench",
	})
	out := make([]any, 0, len(conditions))
	for i := range conditions {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&conditions[i])
		if err != nil {
			return ctrl.Result{}, err
		}
		out = append(out, m)
	}
	if err := unstructured.SetNestedSlice(obj.Object, out, "status", "conditions"); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.client.Status().Patch(ctx, obj, client.MergeFrom(before)); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

func main() {
	namespace := flag.String("namespace", "default", "namespace of the Widgets")
	concurrency := flag.Int("concurrency", 10, "MaxConcurrentReconciles")
	typed := flag.Bool("typed", false, "Widgets as Go structs (a typed cache) instead of unstructured")
	flag.Parse()

	config, err := ctrl.GetConfig() // controller-runtime's own --kubeconfig flag
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubeconfig:", err)
		os.Exit(2)
	}
	config.QPS, config.Burst = -1, 0 // no client-side rate limit, as reconcile_kit's default
	scheme := clientgoscheme.Scheme  // controller-runtime's default
	if *typed {
		addWidgetTypes(scheme)
	}
	mgr, err := ctrl.NewManager(config, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{*namespace: {}}},
		// reads of unstructured objects from the cache, as for typed ones (the default
		// reads them live: one GET more per reconcile than reconcile_kit's)
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		os.Exit(2)
	}
	var forObject client.Object
	var target reconcile.Reconciler
	if *typed {
		forObject, target = &Widget{}, &typedReconciler{client: mgr.GetClient()}
	} else {
		widget := &unstructured.Unstructured{}
		widget.SetGroupVersionKind(widgetGVK)
		forObject, target = widget, &reconciler{client: mgr.GetClient()}
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(forObject, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(controller.Options{MaxConcurrentReconciles: *concurrency}).
		Complete(target)
	if err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(2)
	}
	fmt.Println("started")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		fmt.Fprintln(os.Stderr, "run:", err)
		os.Exit(1)
	}
}
