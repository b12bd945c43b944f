package io.lastunit.balancer.transfer;

/**
 * Fault injection between transfer steps, for crash tests; production uses {@link #NONE}.
 * {@link TransferExecutor} calls {@link #before} right before each attempt of a step's call and
 * {@link #after} right after the call returned.
 *
 * <ul>
 *   <li>A {@link io.grpc.StatusRuntimeException} thrown here counts as that attempt's call failing
 *       with its status: from {@code after} with UNAVAILABLE it is a reply lost on the way back (the
 *       step took effect and is repeated), from {@code before} a request that never left.
 *   <li>Anything else propagates out of the executor untouched: the process "died" there. What was
 *       committed stays committed; the next leader's recovery completes it.
 * </ul>
 */
public interface TransferFaults {
    TransferFaults NONE = new TransferFaults() {
    };

    default void before(TransferStep step, String transferId) {
    }

    default void after(TransferStep step, String transferId) {
    }
}
