package io.lastunit.balancer.transfer;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.lastunit.api.shard.v1.ListTransfersRequest;
import io.lastunit.api.shard.v1.ListTransfersResponse;
import io.lastunit.api.shard.v1.ShardServiceGrpc;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferDirection;
import io.lastunit.api.shard.v1.TransferState;
import io.lastunit.api.topology.v1.Cell;
import io.lastunit.api.topology.v1.ShardInfo;
import io.lastunit.common.channel.ShardChannels;
import io.lastunit.common.topology.Topology;
import java.time.Duration;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Completes the PENDING OUT transfer records on the shards of a topology (DESIGN §7: "a new
 * leader first completes every PENDING OUT record"): for each, step 2 at the record's peer with
 * the recorded quantity, then step 3, through {@link TransferExecutor#resume}. A leader runs it
 * once in full before it publishes its endpoint, and then on a schedule for records older than a
 * bound (left by a step whose attempts ran out, or by a shard that was down).
 *
 * <p>Shards without a live registration are skipped (they cannot answer; their records wait for
 * them to come back). Thread-safe; blocking.
 */
public final class TransferRecovery {
    private static final Logger log = LoggerFactory.getLogger(TransferRecovery.class);

    /**
     * What one pass did.
     *
     * @param unreachable live shards that did not answer ListTransfers (with why)
     * @param skipped     shards that were not live, so not asked
     * @param found       PENDING OUT records old enough to complete
     * @param completed   records driven to DONE
     * @param failed      records left PENDING (a step failed, or the peer is unknown)
     */
    public record Summary(int shardsAsked, List<String> unreachable, List<String> skipped, int found, int completed,
            int failed) {
        /** Every live shard answered and every record found was completed. */
        public boolean complete() {
            return unreachable.isEmpty() && failed == 0;
        }
    }

    private final ShardChannels channels;
    private final TransferExecutor executor;
    private final Duration callTimeout;
    private final InstantSource clock;

    public TransferRecovery(ShardChannels channels, TransferExecutor executor, Duration callTimeout,
            InstantSource clock) {
        this.channels = channels;
        this.executor = executor;
        this.callTimeout = callTimeout;
        this.clock = clock;
    }

    /**
     * Completes the PENDING OUT records created at least {@code minAge} ago (by the shard's clock
     * against ours; ZERO = all of them) on every live shard of every cell.
     *
     * @throws io.lastunit.common.Failure NOT_LEADER when the fence closes
     */
    public Summary completePending(Fence fence, Topology topology, Duration minAge) {
        List<String> unreachable = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        int asked = 0;
        int found = 0;
        int completed = 0;
        int failed = 0;
        long createdBeforeMs = clock.millis() - minAge.toMillis();
        for (Cell cell : topology.cells()) {
            for (ShardInfo source : topology.shards(cell.getName())) {
                if (!topology.isLive(source.getShardId())) {
                    skipped.add(source.getShardId());
                    continue;
                }
                fence.check();
                asked++;
                ListTransfersResponse pending;
                try {
                    pending = ShardServiceGrpc.newBlockingStub(channels.get(source.getAddress()))
                            .withDeadlineAfter(callTimeout.toMillis(), TimeUnit.MILLISECONDS)
                            .listTransfers(ListTransfersRequest.getDefaultInstance());
                } catch (StatusRuntimeException e) {
                    Status st = e.getStatus();
                    unreachable.add(source.getShardId() + " (" + st.getCode()
                            + (st.getDescription() == null ? "" : ": " + st.getDescription()) + ")");
                    continue;
                }
                for (Transfer t : pending.getTransfersList()) {
                    if (t.getDirection() != TransferDirection.OUT || t.getState() != TransferState.PENDING
                            || t.getCreatedAtMs() > createdBeforeMs) {
                        continue;
                    }
                    found++;
                    if (complete(fence, topology, source, t)) {
                        completed++;
                    } else {
                        failed++;
                    }
                }
            }
        }
        Summary s = new Summary(asked, unreachable, skipped, found, completed, failed);
        if (found > 0 || !unreachable.isEmpty()) {
            log.info("recovery shards_asked={} found={} completed={} failed={} unreachable={} skipped={}", asked, found,
                    completed, failed, unreachable, skipped);
        }
        return s;
    }

    private boolean complete(Fence fence, Topology topology, ShardInfo source, Transfer t) {
        ShardInfo target = topology.shard(t.getPeerShardId()).orElse(null);
        if (target == null) {
            log.error("transfer_id={} at {} ({}/{}, qty={}) names target shard {}, which the topology does not know: "
                    + "its units stay in flight", t.getTransferId(), source.getShardId(), t.getTenantId(),
                    t.getItemId(), t.getQuantity(), t.getPeerShardId());
            return false;
        }
        return executor.resume(fence, source, target, t).stage() == TransferResult.Stage.DONE;
    }
}
