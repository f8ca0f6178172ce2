package multicluster

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// goodKubeconfig is a kubeconfig that loads; it need reach nothing here.
const goodKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`

func TestClustersOfSecret(t *testing.T) {
	tests := []struct {
		name      string
		data      map[string]string
		want      []string // the clusters' names
		wantError []string // what the error names, "" for none
	}{
		{"one cluster", map[string]string{"west": goodKubeconfig}, []string{"west"}, nil},
		{"clusters sorted by name", map[string]string{"west": goodKubeconfig, "east": goodKubeconfig}, []string{"east", "west"}, nil},
		{"empty Secret", map[string]string{}, nil, nil},
		{"bad name kept out, good kept", map[string]string{"West_1": goodKubeconfig, "east": goodKubeconfig},
			[]string{"east"}, []string{"secret meshd/remote", `key "West_1"`}},
		{"no kubeconfig kept out, good kept", map[string]string{"north": "{not: [yaml", "east": goodKubeconfig},
			[]string{"east"}, []string{`key "north": not a kubeconfig`}},
		{"every entry bad", map[string]string{"a.b": goodKubeconfig, "c": "[1, 2"},
			nil, []string{`key "a.b"`, `key "c"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "meshd", Name: "remote"}, Data: map[string][]byte{}}
			for k, v := range tc.data {
				s.Data[k] = []byte(v)
			}
			got, err := ClustersOfSecret(s)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
				if string(c.Kubeconfig) != tc.data[c.Name] {
					t.Errorf("cluster %s: kubeconfig %q, want the Secret's", c.Name, c.Kubeconfig)
				}
			}
			if strings.Join(names, ",") != strings.Join(tc.want, ",") {
				t.Errorf("clusters %v, want %v", names, tc.want)
			}
			if (err != nil) != (len(tc.wantError) > 0) {
				t.Fatalf("err = %v, want one naming %q", err, tc.wantError)
			}
			for _, w := range tc.wantError {
				if !strings.Contains(err.Error(), w) || strings.Contains(err.Error(), "\n") {
					t.Errorf("err %q, want one line naming %q", err, w)
				}
			}
		})
	}
}
