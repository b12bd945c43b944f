/**
 * The topology over ZooKeeper (DESIGN §3): where cells, shards and tenants are, and which shard
 * holds an item.
 *
 * <ul>
 *   <li>{@link io.lastunit.common.topology.Placement}: rendezvous hashing, pure.
 *   <li>{@link io.lastunit.common.topology.Topology}: one immutable snapshot.
 *   <li>{@link io.lastunit.common.topology.TopologyCache}: the watched snapshot services read per request.
 *   <li>{@link io.lastunit.common.topology.TopologyStore}: compare-and-set reads and writes (cell-admin).
 *   <li>{@link io.lastunit.common.topology.ShardRegistration}: a shard node's ephemeral {@code live/} znode.
 *   <li>{@link io.lastunit.common.topology.Curators}: the shared client settings.
 * </ul>
 *
 * Plain Java: no framework types; services wire these at their edge.
 */
package io.lastunit.common.topology;
