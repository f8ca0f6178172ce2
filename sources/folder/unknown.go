package folder

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// What a problem says about a kind without a collection: real manifests
// carry many (Deployments, ServiceAccounts, ...), so the message names the
// kind as manifests spell it, says what to do about workload kinds, and
// suggests the registered kind a typo was probably meant to be.

// workloadKinds are the kinds that run Pods, which a folder holds instead.
var workloadKinds = map[string]bool{
	"Deployment": true, "StatefulSet": true, "DaemonSet": true, "ReplicaSet": true,
	"ReplicationController": true, "Job": true, "CronJob": true,
}

// kindName names a kind as a manifest spells it: "ServiceAccount (v1)",
// "Deployment (apps/v1)".
func kindName(gvk schema.GroupVersionKind) string {
	return gvk.Kind + " (" + gvk.GroupVersion().String() + ")"
}

// unknownKindMessage says that gvk has no collection, with a hint: the
// nearest registered kind when gvk looks like a typo of it, or where a
// folder's endpoints come from for a workload kind.
func unknownKindMessage(gvk schema.GroupVersionKind, known []string) string {
	msg := "kind " + kindName(gvk) + " has no collection; kept as unstructured"
	switch near := nearestKind(gvk.Kind, known); {
	case near != "":
		msg += "; did you mean " + near + "?"
	case workloadKinds[gvk.Kind]:
		msg += "; meshd does not run workloads: in a folder, endpoints come from Pods or EndpointSlices (see the demo: meshd with no source flag)"
	}
	return msg
}

// nearestKind returns the kind of known closest to kind by edit distance,
// ignoring case, when it is close enough to be a typo: at most two edits,
// and fewer than half of kind's letters. It returns "" otherwise, and for
// kind itself.
func nearestKind(kind string, known []string) string {
	best, bestDist := "", 0
	for _, k := range known {
		if k == kind {
			return ""
		}
		d := editDistance(strings.ToLower(kind), strings.ToLower(k))
		if d > 2 || 2*d >= len(kind) {
			continue
		}
		if best == "" || d < bestDist || d == bestDist && k < best {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
