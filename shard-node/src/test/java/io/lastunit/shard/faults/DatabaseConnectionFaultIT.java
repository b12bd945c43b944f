package io.lastunit.shard.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.shard.ShardNodeHarness;
import io.lastunit.shard.store.DatabaseOwner;
import io.lastunit.testkit.PostgresFixture;
import io.lastunit.testkit.faults.ClockSkewNemesis;
import io.lastunit.testkit.faults.History;
import io.lastunit.testkit.faults.Nemesis;
import io.lastunit.testkit.faults.ProxyNemesis;
import io.lastunit.testkit.faults.SkewedClock;
import io.lastunit.testkit.faults.TcpProxy;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A flash sale on a real shard node whose connection to PostgreSQL runs through an in-process TCP
 * proxy (testkit's {@link TcpProxy}), with one nemesis per test in the middle of the sale: every
 * connection cut and new ones refused, a blackhole (nothing moves, nothing closes), added latency,
 * a throttled link, and the node's clock skewed from the database's. Each ends with the checks of
 * {@link SaleUnderFault#check}: exactly the total sold, every acknowledged hold present, every
 * unknown resolved by its key, and the shard's invariants clean.
 */
class DatabaseConnectionFaultIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int BUYERS = 2_000;
    private static final long TOTAL = 600;
    private static final int CLIENTS = 16;

    /** The database's address, from the fixture's URL. */
    private static InetSocketAddress database(String jdbcUrl) {
        URI u = URI.create(jdbcUrl.substring("jdbc:".length()));
        return new InetSocketAddress(u.getHost(), u.getPort() < 0 ? 5432 : u.getPort());
    }

    private static String through(TcpProxy proxy, String jdbcUrl) {
        URI u = URI.create(jdbcUrl.substring("jdbc:".length()));
        return "jdbc:postgresql://" + proxy.address() + u.getRawPath()
                + (u.getRawQuery() == null ? "" : "?" + u.getRawQuery());
    }

    /** Runs the sale with the nemesis {@code make} builds from the proxy (and the node's clock). */
    private History sale(String name, Function<TcpProxy, Nemesis> make, SkewedClock clock) throws Exception {
        return sale(name, make, clock, 150);
    }

    /** ... healed once {@code healAfterDone} calls ended after it started. */
    private History sale(String name, Function<TcpProxy, Nemesis> make, SkewedClock clock, int healAfterDone)
            throws Exception {
        String url = PG.newDatabase(name);
        try (TcpProxy proxy = TcpProxy.start("shard-pg-" + name, database(url))) {
            Map<String, Object> props = new HashMap<>();
            props.put("lastunit.shard.id", name);
            // Small bounds so that the faults end calls quickly: a blackholed statement after 2 s.
            props.put("lastunit.shard.jdbc-socket-timeout-ms", 2_000);
            props.put("lastunit.shard.jdbc-lock-timeout-ms", 1_000);
            props.put("lastunit.shard.jdbc-connect-timeout-ms", 1_000);
            ShardNodeHarness harness = new ShardNodeHarness(PG, through(proxy, url), props);
            if (clock != null) {
                harness.withClock(clock);
            }
            try (ShardNodeHarness shard = harness.start()) {
                shard.createItem("acme", "hot", TOTAL);
                SaleUnderFault sale = new SaleUnderFault(shard::blocking, "acme", "hot");
                Nemesis nemesis = make.apply(proxy);
                SaleUnderFault.Result r = sale.run(BUYERS, CLIENTS, 100, healAfterDone, nemesis);
                System.out.printf("%s: %s; nemesis %s for %d ms; %d RESERVED told, %d resolved by key%n", name,
                        r.history(), nemesis.name(), (r.nemesisStoppedAt() - r.nemesisStartedAt()) / 1_000_000,
                        r.acked().size(), r.resolved().size());
                sale.check(r, BUYERS, TOTAL, url, PG.user(), PG.password());
                assertThat(shard.checkInvariants().getDriftsList()).isEmpty();
                assertThat(shard.node().owner().state()).isEqualTo(DatabaseOwner.State.OWNED);
                return r.history();
            }
        }
    }

    @Test
    void cut_everyConnectionReset_andNewOnesRefused_midSale() throws Exception {
        History h = sale("cut", ProxyNemesis::cut, null, 48);
        assertThat(h.count(History.Outcome.UNKNOWN)).as("the cut reached calls in flight").isPositive();
    }

    @Test
    void blackhole_nothingMovesAndNothingCloses_midSale_endsAtTheSocketTimeout() throws Exception {
        History h = sale("blackhole", ProxyNemesis::blackhole, null, 32);
        assertThat(h.count(History.Outcome.UNKNOWN)).as("the blackhole reached calls in flight").isPositive();
    }

    @Test
    void latency_onEveryChunk_midSale() throws Exception {
        sale("latency", p -> ProxyNemesis.latency(p, Duration.ofMillis(20), Duration.ofMillis(10)), null);
    }

    @Test
    void throttle_theLinkTo64KiBPerSecond_midSale() throws Exception {
        sale("throttle", p -> ProxyNemesis.throttle(p, 64 * 1024), null);
    }

    @Test
    void clockSkew_theNodesClockAQuarterHourAhead_midSale_expiresNothingEarly() throws Exception {
        // Holds live 10 minutes by the database's clock; a node clock 15 minutes ahead makes the
        // lanes think them due, and the database, which judges expiry, refuses: all stay HELD.
        SkewedClock clock = new SkewedClock();
        sale("skew_ahead", p -> new ClockSkewNemesis(clock, Duration.ofMinutes(15)), clock);
    }

    @Test
    void clockSkew_theNodesClockAQuarterHourBehind_midSale() throws Exception {
        SkewedClock clock = new SkewedClock();
        sale("skew_behind", p -> new ClockSkewNemesis(clock, Duration.ofMinutes(-15)), clock);
    }
}
