package io.lastunit.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.api.shard.v1.CompleteTransferRequest;
import io.lastunit.api.shard.v1.Transfer;
import io.lastunit.api.shard.v1.TransferInRequest;
import io.lastunit.api.shard.v1.TransferOutRequest;
import io.lastunit.common.invariant.CrossShardReport;
import io.lastunit.common.invariant.ItemBalance;
import io.lastunit.testkit.PostgresFixture;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The cross-shard check is exact in every single check, not only once a drift persists: while
 * a driver runs the transfer protocol's three steps back and forth between two real shard nodes
 * without pause, every one of several hundred checks balances, and enough of them catch a
 * transfer between its steps to show that the case was exercised. The shards are read at
 * different moments; each answers with its levels and its transfer records from one snapshot.
 */
class ExactCheckIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static final int CHECKS = 400;

    private static BalancerCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = new BalancerCluster(PG, List.of("eu", "us")).start();
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void everyCheckBalances_whileTransfersRunBetweenTheReads() throws Exception {
        Map<String, Long> quotas = new LinkedHashMap<>();
        quotas.put("eu", 500L);
        quotas.put("us", 500L);
        cluster.createItem("acme", "bolt", quotas);
        String eu = cluster.shard("eu").getShardId();
        String us = cluster.shard("us").getShardId();

        List<String> driverFailures = new CopyOnWriteArrayList<>();
        AtomicInteger transfers = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        Thread driver = new Thread(() -> {
            int n = 0;
            while (!stop.get()) { // each transfer runs to its end: no units left in flight
                boolean fromEu = n % 2 == 0;
                String source = fromEu ? "eu" : "us";
                String target = fromEu ? "us" : "eu";
                String id = "x-" + n++;
                try {
                    Transfer out = cluster.shardApi(source).transferOut(TransferOutRequest.newBuilder()
                            .setTransferId(id).setTenantId("acme").setItemId("bolt")
                            .setPeerShardId(fromEu ? us : eu).setMaxQuantity(1 + n % 37).build());
                    if (out.getQuantity() == 0) {
                        continue;
                    }
                    // A short gap between the steps, as between a balancer's calls.
                    LockSupport.parkNanos(n % 3 * 1_000_000L);
                    cluster.shardApi(target).transferIn(TransferInRequest.newBuilder().setTransferId(id)
                            .setTenantId("acme").setItemId("bolt").setPeerShardId(fromEu ? eu : us)
                            .setQuantity(out.getQuantity()).build());
                    cluster.shardApi(source).completeTransfer(CompleteTransferRequest.newBuilder()
                            .setTransferId(id).build());
                    transfers.incrementAndGet();
                } catch (RuntimeException e) {
                    driverFailures.add(id + ": " + e);
                    return;
                }
            }
        }, "transfer-driver");
        driver.setDaemon(true);
        driver.start();

        List<String> drifts = new ArrayList<>();
        int caughtOut = 0;
        int caughtIn = 0;
        int checks = 0;
        try {
            // CHECKS checks at least, and on (bounded) until the driver ran a quarter as many transfers
            // and some check caught one between its steps: both show the case was exercised, and how
            // soon they come follows how the host schedules the two threads, not what is tested.
            long deadline = System.nanoTime() + BalancerCluster.scaled(Duration.ofMinutes(2)).toNanos();
            for (; checks < CHECKS || ((transfers.get() <= CHECKS / 4 || caughtOut == 0)
                    && System.nanoTime() < deadline); checks++) {
                CrossShardReport report = cluster.check();
                assertThat(report.problems()).as("check %d", checks).isEmpty();
                for (ItemBalance b : report.balances()) {
                    if (!b.ok()) {
                        drifts.add("check " + checks + ": " + b.describe());
                    }
                    if (b.inFlight() > 0) {
                        caughtOut++;
                    } else if (b.inFlight() < 0) {
                        caughtIn++;
                    }
                }
            }
        } finally {
            stop.set(true);
            driver.join(BalancerCluster.scaled(Duration.ofSeconds(30)).toMillis());
        }
        System.out.printf("ExactCheckIT: checks=%d transfers=%d caught_taken_not_credited=%d"
                + " caught_credited_not_taken=%d drifts=%d%n", checks, transfers.get(), caughtOut, caughtIn,
                drifts.size());
        assertThat(driverFailures).isEmpty();
        assertThat(drifts).isEmpty();
        assertThat(transfers.get()).isGreaterThan(CHECKS / 4);
        assertThat(caughtOut).as("checks that caught a transfer taken and not yet credited").isPositive();
        // After the driver stops: nothing in flight, and the units all there.
        assertThat(driver.isAlive()).isFalse();
        CrossShardReport end = cluster.check();
        assertThat(end.ok()).as("%s", end).isTrue();
        assertThat(cluster.allotmentSum("acme", "bolt")).isEqualTo(1_000);
    }
}
