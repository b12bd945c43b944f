package io.lastunit.shard.grpc;

import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.lastunit.api.shard.v1.TenantChunk;
import io.lastunit.common.GrpcErrors;
import io.lastunit.shard.move.TenantExport;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An ExportTenant call's stream, as the export's {@link TenantExport.Sink}: a chunk is sent only
 * when the call is ready for it (gRPC's flow control: the receiver took what was sent), so the
 * node buffers at most a chunk per export however slowly the mover reads. The exporting thread
 * waits for readiness at most {@code readyWaitMax}, then gives up the export; a cancelled call
 * stops it at the next chunk. Thread-safe: the transport thread only signals readiness and
 * cancellation; the exporting thread alone sends.
 */
final class ChunkStream implements TenantExport.Sink {
    private static final Logger log = LoggerFactory.getLogger(ChunkStream.class);

    private final ServerCallStreamObserver<TenantChunk> call;
    private final long readyWaitMaxNanos;
    private final Object signal = new Object();
    private volatile boolean cancelled;
    private volatile boolean stalled;

    /** Must be made in the call's handler, before it returns (gRPC's rule for these handlers). */
    ChunkStream(ServerCallStreamObserver<TenantChunk> call, Duration readyWaitMax) {
        this.call = call;
        this.readyWaitMaxNanos = readyWaitMax.toNanos();
        call.setOnReadyHandler(this::wake);
        call.setOnCancelHandler(() -> {
            cancelled = true;
            wake();
        });
    }

    private void wake() {
        synchronized (signal) {
            signal.notifyAll();
        }
    }

    @Override
    public boolean send(TenantChunk chunk) {
        long deadline = System.nanoTime() + readyWaitMaxNanos;
        synchronized (signal) {
            while (!cancelled && !call.isReady()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    stalled = true;
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(signal, left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        if (cancelled) {
            return false;
        }
        call.onNext(chunk);
        return true;
    }

    /** Ends the call with what the export came to. */
    void finish(TenantExport.Exported done, Throwable err) {
        try {
            if (cancelled) {
                log.debug("ExportTenant cancelled by the caller");
            } else if (err != null) {
                call.onError(GrpcErrors.toStatus(err));
            } else if (stalled) {
                call.onError(Status.CANCELLED.withDescription("ExportTenant stopped: the caller took no chunk for "
                        + TimeUnit.NANOSECONDS.toMillis(readyWaitMaxNanos) + " ms").asRuntimeException());
            } else if (done.complete()) {
                call.onCompleted();
            } else {
                call.onError(Status.CANCELLED.withDescription("ExportTenant stopped").asRuntimeException());
            }
        } catch (RuntimeException e) {
            log.debug("ExportTenant end dropped: {}", e.toString()); // the call is gone
        }
    }
}
