package krt

// labelPair is one key=value label, used as a map key without allocating.
type labelPair struct{ k, v string }

// selectorMatches reports whether labels satisfy every requirement of
// selector. An empty selector matches everything.
func selectorMatches(selector, labels map[string]string) bool {
	if len(selector) > len(labels) {
		return false
	}
	for k, v := range selector {
		if lv, ok := labels[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

// selects reports whether an item's selector selects labels. An empty or
// nil selector selects nothing, as a Kubernetes Service's selector does.
func selects(selector, labels map[string]string) bool {
	return len(selector) > 0 && selectorMatches(selector, labels)
}

// minPair returns the selector's requirement with the smallest key: a
// deterministic representative under which the selector is indexed.
func minPair(m map[string]string) (labelPair, bool) {
	first := true
	var p labelPair
	for k, v := range m {
		if first || k < p.k {
			p = labelPair{k, v}
			first = false
		}
	}
	return p, !first
}
