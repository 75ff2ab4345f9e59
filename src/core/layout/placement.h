/* SPDX-License-Identifier: MIT */
/* placement.h: which core each rank of an oversubscribed node runs on.
 *
 * When a node has more ranks than cores, where the scheduler puts them
 * matters more than anything else about speed: the ranks wake each other
 * for every message, and waking a rank on another core of a virtual machine
 * costs an inter-processor interrupt and often a halted vCPU (measured on
 * the 2-core machines: the default 5-rank CartPole job ran its 30,000 env
 * steps in 1.7-1.9 s with the ranks free to move, 1.0-1.2 s with the learner
 * and its parameter server sharing a core; separating them brought it back
 * to 1.7 s). So ranks that hand work to each other in turn share a core:
 *
 *   one group per learner l:      learner l + PS shards p with p mod L == l
 *   one group per replay shard s: replay s + actors a with a mod S == s
 *                                 (the coordinator joins the first)
 *
 * and groups are dealt to the node's cores round-robin, learner groups
 * first. Only ranks on the node count. Pure function, no MPI: job.c gathers
 * the node's ranks and applies the result with sched_setaffinity.
 */
#ifndef GORILA_PLACEMENT_H
#define GORILA_PLACEMENT_H

#include "layout.h"

#include <stdbool.h>

/* node_ranks: the world ranks on this node (n_node of them); cpus: the
 * core ids to use (n_cpus). Writes core_of[i] for node_ranks[i]: the core
 * id to pin to. */
void placement_assign(const Layout *lay, const int *node_ranks, int n_node, const int *cpus, int n_cpus,
                      int *core_of);

/* Which node each rank of a job across hosts runs on (scripts/launch
 * --hostfile, through `gorila config place`). Ranks that exchange messages
 * every update go on one node where they fit: every learner with every PS
 * shard (each learner sends each shard its gradient slice and gets its
 * parameters back: one group, learner l followed by its shards p mod L, so
 * a group split across nodes keeps those together), each replay shard with
 * its actors; the coordinator is a group of its own. The ranks are spread
 * over the nodes in proportion to their slots: node i has room for
 * floor(N * slots_i / total) ranks, one more for the first nodes with a
 * slot (hostfile order) until the N ranks have room, never more than its
 * slots when the slots suffice (a node with 0 slots gets nothing). Groups
 * are placed largest first (the learners' group before replay groups of
 * the same size, the coordinator last), each on the node with the least
 * room that holds all of it, the earlier node on a tie (best fit). A group
 * that fits in no node's room goes whole to the roomiest node whose free
 * slots hold it (over its share: a group split across hosts costs more
 * than an uneven spread), else in runs to the roomiest nodes with a free
 * slot. slots: n_nodes counts. Writes node_of[rank] for every rank of lay.
 * Returns 0, or -1 with err when the slots are fewer than the ranks and
 * oversubscribe is false (or there are no slots at all). */
int placement_nodes(const Layout *lay, const int *slots, int n_nodes, bool oversubscribe, int *node_of, char *err);

/* The other placement across hosts (`gorila config place --spread`,
 * scripts/launch --spread, scripts/compare on a network): every learner and
 * every PS shard on a node of its own while nodes last, so that the
 * learners' sync traffic crosses the network the way the comparison's cost
 * model assumes (with L + P + 1 nodes or more, each learner and each shard
 * has a NIC to itself). Dealt round-robin over the nodes in order: learner
 * 0 .. L-1, PS shard 0 .. P-1, then each replay shard with its actors (kept
 * together), the coordinator last; a unit starts at the node after the
 * one the previous unit ended on, skipping nodes with 0 slots and, when the slots
 * suffice, full nodes (a replay group continues on the next node with a
 * free slot). Oversubscribed (fewer slots than ranks), the slot counts do
 * not weigh: units are dealt round-robin over the nodes with slots, unlike
 * placement_nodes' proportional shares. With L + P + 1 nodes or more each
 * learner and each shard has a node to itself as long as the replay groups
 * fit where they start (more replay shards, or a group larger than a node's
 * slots, wrap onto the learners' nodes). The same errors as
 * placement_nodes. */
int placement_spread(const Layout *lay, const int *slots, int n_nodes, bool oversubscribe, int *node_of, char *err);

#endif
