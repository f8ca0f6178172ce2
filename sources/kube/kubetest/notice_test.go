package kubetest

import (
	"strings"
	"testing"
)

// fakeM stands for testing.M: its tests skip through kubetest.
type fakeM struct {
	t     *testing.T
	skips []string
}

func (m fakeM) Run() int {
	for i, reason := range m.skips {
		m.t.Run("skipped"+string(rune('a'+i)), func(t *testing.T) { skip(t, reason) })
	}
	return 0
}

func TestReportSkips(t *testing.T) {
	saved := skipped.reasons
	defer func() { skipped.reasons, skipped.total = saved, len(saved) }()
	fakeRepo(t, "")
	for _, tc := range []struct {
		name  string
		skips []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"-short skips them"},
			"kubetest: ./sources/kube: skipped 1 test that needs kube-apiserver and etcd: -short skips them\n"},
		{"several", []string{"-short skips them", "no script", "-short skips them"},
			"kubetest: ./sources/kube: skipped 3 tests that need kube-apiserver and etcd: -short skips them; no script\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			skipped.reasons, skipped.total = nil, 0
			var out strings.Builder
			if code := (reporting{fakeM{t, tc.skips}, &out}).Run(); code != 0 || out.String() != tc.want {
				t.Errorf("exit %d, said %q; want 0, %q", code, out.String(), tc.want)
			}
		})
	}
}
