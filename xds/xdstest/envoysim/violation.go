package envoysim

import "fmt"

// Rule names a protocol rule the server broke, in a Violation.
type Rule string

// The rules the proxy checks.
const (
	// RuleUnrequested: a response carried a resource of a type the proxy
	// asks for by name that it did not ask for (or had stopped asking
	// for, once the server had read that): an EDS response before the CDS
	// response naming its cluster, an RDS one before its listener, or, on
	// Delta, any resource outside the subscription.
	RuleUnrequested Rule = "unrequested"
	// RuleUnknownType: a response of a type the proxy never asked for.
	RuleUnknownType Rule = "unknown-type"
	// RuleNoNonce: a response without a nonce, which the proxy could not
	// answer.
	RuleNoNonce Rule = "no-nonce"
	// RuleNoVersion: a Delta resource without a version, which a
	// reconnecting proxy could not name.
	RuleNoVersion Rule = "no-version"
	// RuleSentAndRemoved: a Delta response that both carries a resource
	// and names it removed.
	RuleSentAndRemoved Rule = "sent-and-removed"
	// RuleWarmingOverdue: an updated cluster or listener still warming
	// after the warming limit (WithWarmingLimit): the server did not send
	// the load assignment or route configuration it waits for.
	RuleWarmingOverdue Rule = "warming-overdue"
	// RuleNack: the proxy rejected a response (see AllowNacks).
	RuleNack Rule = "nack"
	// RuleWildcardOverlap: on Delta, the proxy dropped a name it also
	// holds through a wildcard, and the server did not say, within the
	// warming limit, whether the wildcard keeps it.
	RuleWildcardOverlap Rule = "wildcard-overlap"
)

// Violation is one rule the server broke, as the proxy saw it.
type Violation struct {
	Rule    Rule
	TypeURL string
	// Name is the resource concerned, if one is.
	Name   string
	Detail string
}

func (v Violation) String() string {
	s := fmt.Sprintf("%s %s", v.Rule, short(v.TypeURL))
	if v.Name != "" {
		s += " " + v.Name
	}
	if v.Detail != "" {
		s += ": " + v.Detail
	}
	return s
}
