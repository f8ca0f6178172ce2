package kube

import (
	"testing"
	"time"

	"github.com/meshd/meshd/sources/internal/testcrd"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/meshd/meshd/krt"
)

// TestKubeCRDInstalledAfterRun: a resource the server does not serve at
// start is an empty, synced collection marked skipped; once its CRD is
// installed, the source starts watching it with no restart.
func TestKubeCRDInstalledAfterRun(t *testing.T) {
	c := clients(t)
	gvr := schema.GroupVersionResource{Group: "late.meshd.io", Version: "v1", Resource: "widgets"}
	ns := newNamespace(t, c.Kube)
	src := New(krt.NewGraph(), c, WithDefaultWatch(Watch{Namespace: ns}), WithDiscoveryInterval(100*time.Millisecond))
	widgets := AddDynamic[*testcrd.Widget](src, gvr, Watch{Namespace: ns})
	run(t, src, widgets)
	if st := statsOf(src, gvr); !st.Skipped || !st.Synced || st.Items != 0 {
		t.Fatalf("before the CRD: stats = %+v, want skipped, synced and empty", st)
	}

	installCRD(t, c, gvr, "Widget")
	createObj(t, c, gvr, ns, map[string]any{
		"apiVersion": "late.meshd.io/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1", "namespace": ns}, "spec": map[string]any{"size": int64(3)},
	})
	eventually(t, "widget of the late CRD", func() bool { w, ok := widgets.Get(ns + "/w1"); return ok && w.Spec.Size == 3 })
	if st := statsOf(src, gvr); st.Skipped || !st.Synced || st.Adds != 1 {
		t.Errorf("after the CRD: stats = %+v, want watched, synced, one add", st)
	}
}

// statsOf returns the stats of the collection of gvr.
func statsOf(src *Source, gvr schema.GroupVersionResource) CollectionStats {
	for _, st := range src.Stats() {
		if st.Resource == gvr.String() {
			return st
		}
	}
	return CollectionStats{}
}
