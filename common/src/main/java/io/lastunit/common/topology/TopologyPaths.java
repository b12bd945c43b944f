package io.lastunit.common.topology;

import io.lastunit.common.Limits;
import org.apache.curator.utils.PathUtils;

/**
 * The znode layout under one namespace root (DESIGN §3), in one place so the store, the cache
 * and the registration agree on it:
 *
 * <pre>
 *   {root}/cells/{cell}                  Cell
 *   {root}/cells/{cell}/shards           (empty; created with the cell's shards)
 *   {root}/cells/{cell}/shards/{shard}   ShardInfo
 *   {root}/live/{shard}                  LiveShard (ephemeral)
 *   {root}/tenants/{tenant}              TenantPlacement
 *   {root}/moves/{move}                  Move
 *   {root}/moves/{move}/lease            the mover acting on it (ephemeral, plain text)
 * </pre>
 *
 * Immutable. Hazard: every name becomes a path segment, so names must pass {@link #isName}
 * first; a {@code /} in an id would address another znode.
 */
final class TopologyPaths {
    /** Longest cell, shard, tenant, region and move id. */
    static final int NAME_LENGTH_MAX = 64;

    static final String CELLS = "cells";
    static final String SHARDS = "shards";
    static final String LIVE = "live";
    static final String TENANTS = "tenants";
    static final String MOVES = "moves";
    static final String LEASE = "lease";

    final String root;

    TopologyPaths(String root) {
        PathUtils.validatePath(root);
        if (root.equals("/") || root.endsWith("/")) {
            throw new IllegalArgumentException("topology root must be a path below / without a trailing slash: " + root);
        }
        this.root = root;
    }

    /**
     * True for a name that may be a path segment: {@link Limits#isId} with at most
     * {@value #NAME_LENGTH_MAX} characters, no {@code /}, and not {@code .} or {@code ..}.
     */
    static boolean isName(String s) {
        return Limits.isId(s, NAME_LENGTH_MAX) && s.indexOf('/') < 0 && !s.equals(".") && !s.equals("..");
    }

    String cells() {
        return root + "/" + CELLS;
    }

    String cell(String cell) {
        return cells() + "/" + cell;
    }

    String shards(String cell) {
        return cell(cell) + "/" + SHARDS;
    }

    String shard(String cell, String shardId) {
        return shards(cell) + "/" + shardId;
    }

    String live() {
        return root + "/" + LIVE;
    }

    String live(String shardId) {
        return live() + "/" + shardId;
    }

    String tenants() {
        return root + "/" + TENANTS;
    }

    String tenant(String tenant) {
        return tenants() + "/" + tenant;
    }

    String moves() {
        return root + "/" + MOVES;
    }

    String move(String moveId) {
        return moves() + "/" + moveId;
    }

    String moveLease(String moveId) {
        return move(moveId) + "/" + LEASE;
    }

    /** The segments of {@code path} below the root, or null when it is the root or not below it. */
    String[] relative(String path) {
        if (!path.startsWith(root + "/")) {
            return null;
        }
        return path.substring(root.length() + 1).split("/", -1);
    }
}
