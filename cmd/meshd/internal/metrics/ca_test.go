package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/meshd/meshd/security/caserver"
)

type fakeCA struct {
	st     caserver.Stats
	expiry time.Time
}

func (f fakeCA) Stats() caserver.Stats { return f.st }
func (f fakeCA) Expiry() time.Time     { return f.expiry }
func (f fakeCA) TrustedRoots() int     { return 2 }

func TestCACollector(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	c := NewCACollector(fakeCA{
		st:     caserver.Stats{Issued: 7, Refused: map[caserver.Reason]uint64{caserver.ReasonIdentityMismatch: 2}},
		expiry: now.Add(90 * time.Second),
	})
	c.now = func() time.Time { return now }
	want := `
# HELP meshd_ca_certificates_issued_total Workload certificates signed.
# TYPE meshd_ca_certificates_issued_total counter
meshd_ca_certificates_issued_total 7
# HELP meshd_ca_root_expiry_seconds Seconds until the signing CA certificate (or one above it) expires.
# TYPE meshd_ca_root_expiry_seconds gauge
meshd_ca_root_expiry_seconds 90
# HELP meshd_ca_trusted_roots Roots in the trust bundle; more than one while a rotation is under way.
# TYPE meshd_ca_trusted_roots gauge
meshd_ca_trusted_roots 2
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"meshd_ca_certificates_issued_total", "meshd_ca_root_expiry_seconds", "meshd_ca_trusted_roots"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(c, "meshd_ca_requests_refused_total"); n != len(caserver.Reasons) {
		t.Errorf("%d refusal series, want one per reason (%d)", n, len(caserver.Reasons))
	}
}
