package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshd/meshd/cmd/meshd/app"
	"github.com/meshd/meshd/cmd/meshd/app/apptest"
	"github.com/meshd/meshd/internal/leakcheck"
	"github.com/meshd/meshd/krt"
)

const manifests = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
---
apiVersion: v1
kind: Namespace
metadata:
  name: empty
---
apiVersion: v1
kind: Service
metadata:
  name: cart
  namespace: shop
spec:
  selector: {app: cart}
  ports: [{port: 80}]
`

const moreServices = `apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: shop
spec:
  selector: {app: web}
  ports: [{port: 80}]
`

// TestCustomCollection runs meshd with the extension on a folder, and
// checks the collection through the debug UI's API as a folder change
// flows through it.
func TestCustomCollection(t *testing.T) {
	defer leakcheck.VerifyNone(t)
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mesh.yaml", manifests)

	cfg := app.DefaultConfig()
	cfg.ConfigDir, cfg.XDSAddr, cfg.DebugAddr = dir, "127.0.0.1:0", "127.0.0.1:0"
	var col krt.Collection[NamespaceServices]
	cfg.Extend = extend(func(c krt.Collection[NamespaceServices]) { col = c })
	a, stop := apptest.Start(t, cfg)
	defer stop()

	if got, _ := col.Get("shop"); got.Count != 1 || got.Services[0] != "cart" {
		t.Errorf("shop = %+v, want 1 service (cart)", got)
	}
	if got, ok := col.Get("empty"); !ok || got.Count != 0 {
		t.Errorf("empty = %+v, %v, want 0 services", got, ok)
	}

	base := "http://" + a.DebugAddr() + "/debug/api/"
	checkGraphHas(t, base, "namespace-services")

	// A new service in shop updates shop's item, as the UI shows it.
	write("more.yaml", moreServices)
	waitShopServices(t, base, "cart,web")
}

// checkGraphHas fails t unless the debug UI's graph at base has a node
// named name.
func checkGraphHas(t *testing.T, base, name string) {
	t.Helper()
	var graph struct {
		Collections []struct{ Name string }
	}
	getJSON(t, base+"graph", &graph)
	found := false
	for _, c := range graph.Collections {
		found = found || c.Name == name
	}
	if !found {
		t.Fatalf("the debug UI's graph has no %s node: %+v", name, graph.Collections)
	}
}

// waitShopServices polls the debug UI at base until shop's item of
// namespace-services lists services, joined by commas, and fails t after
// 20s.
func waitShopServices(t *testing.T, base, services string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var page struct {
			Items []struct {
				Key   string
				Value NamespaceServices
			}
		}
		getJSON(t, base+"collections/"+url.PathEscape("namespace-services")+"/items?prefix=shop", &page)
		if len(page.Items) == 1 && page.Items[0].Value.Count == len(strings.Split(services, ",")) &&
			strings.Join(page.Items[0].Value.Services, ",") == services {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("shop never showed services %s in the UI; last page: %+v", services, page)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func getJSON(t *testing.T, u string, into any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d %s", u, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v: %s", u, err, body)
	}
}
