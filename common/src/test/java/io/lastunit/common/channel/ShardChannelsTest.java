package io.lastunit.common.channel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Channels are dialled lazily: none of these tests opens a connection. */
class ShardChannelsTest {
    static final ShardChannels.Dial DIAL = new ShardChannels.Dial(null, 1 << 20, true, false);

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
    void dial_refusesANonPositiveReplyBound() {
        assertThatThrownBy(() -> new ShardChannels.Dial(null, 0, true, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("inboundMessageBytesMax");
    }
}
