package io.lastunit.common.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Channels are dialled lazily: none of these tests opens a connection. */
class ShardChannelsTest {
    static final ShardChannels.Dial DIAL = new ShardChannels.Dial(io.lastunit.common.tls.ClientTls.PLAINTEXT, 1 << 20, true, false);

    @Test
    void get_sharesOneChannelPerAddress() {
        try (ShardChannels channels = new ShardChannels(DIAL, Duration.ZERO)) {
            ManagedChannel a = channels.get("127.0.0.1:1");

            assertThat(channels.get("127.0.0.1:1")).isSameAs(a);
            assertThat(channels.get("127.0.0.1:2")).isNotSameAs(a);
            assertThat(channels.size()).isEqualTo(2);
        }
    }

    @Test
    void retain_shutsDownTheChannelsOfAddressesThatLeft_andTellsTheListener() {
        List<ManagedChannel> removed = new ArrayList<>();
        try (ShardChannels channels = new ShardChannels(DIAL, Duration.ZERO)) {
            channels.onRemoved(removed::add);
            ManagedChannel kept = channels.get("127.0.0.1:1");
            ManagedChannel gone = channels.get("127.0.0.1:2");

            channels.retain(Set.of("127.0.0.1:1"));

            assertThat(removed).containsExactly(gone);
            assertThat(gone.isShutdown()).isTrue();
            assertThat(kept.isShutdown()).isFalse();
            assertThat(channels.get("127.0.0.1:2")).as("a new channel if it comes back").isNotSameAs(gone);
        }
    }

    @Test
    void close_shutsDownEveryChannel_andRefusesNewOnes() {
        ShardChannels channels = new ShardChannels(DIAL, Duration.ofSeconds(1));
        ManagedChannel a = channels.get("127.0.0.1:1");

        channels.close();

        assertThat(a.isShutdown()).isTrue();
        assertThat(channels.size()).isZero();
        assertThatThrownBy(() -> channels.get("127.0.0.1:1")).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void get_tellsAFailingChannelToConnectAgain_atMostOncePerWait() {
        AtomicLong now = new AtomicLong(1_000);
        StateChannel ch = new StateChannel();
        try (ShardChannels channels = new ShardChannels(a -> ch, Duration.ZERO, now::get)) {
            channels.get("s:1");
            assertThat(ch.resets).as("a channel that is not failing keeps its own pace").isZero();

            ch.state = ConnectivityState.TRANSIENT_FAILURE;
            channels.get("s:1");
            channels.get("s:1");
            assertThat(ch.resets).as("once at once, then not again within the wait").isEqualTo(1);

            now.addAndGet(ShardChannels.RECONNECT_WAIT_MAX.toNanos() - 1);
            channels.get("s:1");
            assertThat(ch.resets).isEqualTo(1);
            now.addAndGet(1);
            channels.get("s:1");
            assertThat(ch.resets).as("once more after the wait").isEqualTo(2);

            ch.state = ConnectivityState.CONNECTING;
            now.addAndGet(ShardChannels.RECONNECT_WAIT_MAX.toNanos());
            channels.get("s:1");
            assertThat(ch.resets).as("a channel already connecting is left alone").isEqualTo(2);
        }
    }

    /** A channel whose state the test sets, counting the calls that skip its backoff; it makes no calls. */
    private static final class StateChannel extends ManagedChannel {
        volatile ConnectivityState state = ConnectivityState.READY;
        int resets;
        boolean shutdown;

        @Override
        public ConnectivityState getState(boolean requestConnection) {
            return state;
        }

        @Override
        public void resetConnectBackoff() {
            resets++;
        }

        @Override
        public ManagedChannel shutdown() {
            shutdown = true;
            return this;
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public ManagedChannel shutdownNow() {
            return shutdown();
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return shutdown;
        }

        @Override
        public <Q, A> ClientCall<Q, A> newCall(MethodDescriptor<Q, A> method, CallOptions options) {
            throw new UnsupportedOperationException("no calls in this test");
        }

        @Override
        public String authority() {
            return "s:1";
        }
    }

    @Test
    void dial_refusesANonPositiveReplyBound() {
        assertThatThrownBy(() -> new ShardChannels.Dial(io.lastunit.common.tls.ClientTls.PLAINTEXT, 0, true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inboundMessageBytesMax");
    }
}
