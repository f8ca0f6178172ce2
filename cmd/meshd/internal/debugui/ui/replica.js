// The header's badge: whether this replica leads the replicas' election
// (and so writes to the cluster) or stands by. It stays hidden when the
// binary runs without leader election.

import { $ } from './dom.js';
import { fmtAgo } from './format.js';

let result = null; // the latest ReplicaResult

// showReplica shows a ReplicaResult; with none, it redraws the last one,
// to keep relative times current.
export function showReplica(res) {
  if (res) result = res;
  if (!result) return;
  const badge = $('replica');
  if (!result.available || !result.replica) {
    badge.hidden = true;
    badge.dataset.role = 'none';
    return;
  }
  const r = result.replica;
  badge.textContent = badgeText(r);
  badge.title = tooltip(r).join('\n');
  badge.dataset.role = r.leading ? 'leader' : 'standby';
  badge.hidden = false;
}

// hasReplica reports whether an answer was shown yet.
export function hasReplica() { return result !== null; }

const isSelf = (r) => r.leader && r.leader === r.identity;

function badgeText(r) {
  if (r.leading) return 'leader';
  if (!r.leader) return 'standby · no leader seen yet';
  return 'standby · leader: ' + r.leader + (isSelf(r) ? ' (this replica)' : '');
}

function tooltip(r) {
  const since = r.since ? `${new Date(r.since).toLocaleString([], { hour12: false })} (${fmtAgo(r.since)})` : '';
  const lines = [
    r.leading ? 'This replica leads: it serves xDS and writes to the cluster.'
      : 'This replica stands by: it serves xDS; only the leader writes to the cluster.',
    `lease: ${r.lease}`,
    `this replica: ${r.identity}`,
    `leader: ${r.leader || 'none seen yet'}${since ? ', since ' + since : ''}`,
    `terms won by this replica: ${r.terms}`,
  ];
  if (isSelf(r) && !r.leading) lines.push('The Lease still names this replica, which is not leading: its term is ending or starting.');
  return lines;
}
