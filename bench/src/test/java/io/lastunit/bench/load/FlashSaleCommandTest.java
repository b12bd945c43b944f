package io.lastunit.bench.load;

import static org.assertj.core.api.Assertions.assertThat;

import io.lastunit.admin.cli.ExitCodes;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class FlashSaleCommandTest {

    private static FlashSaleCommand parse(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "flash-sale";
        System.arraycopy(args, 0, all, 1, args.length);
        CommandLine.ParseResult r = FlashSaleLoad.commandLine().parseArgs(all);
        return (FlashSaleCommand) r.subcommand().commandSpec().userObject();
    }

    @Test
    void defaultsAreValid() {
        FlashSaleCommand c = parse();
        assertThat(c.problems()).isEmpty();
        assertThat(c.units).isEqualTo(10_000);
        assertThat(c.buyers).isEqualTo(1_000_000);
        assertThat(c.concurrency).isEqualTo(512);
        assertThat(c.items).isEqualTo(1);
        assertThat(c.shards()).isEqualTo(2);
        assertThat(c.rate).isNull();
        assertThat(c.confirm).isFalse();
        assertThat(c.token()).isEqualTo("lastunit-dev-token");
        assertThat(c.out.toString()).isEqualTo("bench/results/runs");
    }

    @Test
    void regionsAndBucketsOutsideTheirRangesAreRefusedNamingTheOption() {
        assertThat(parse("--regions", "3", "--buckets", "16").problems()).isEmpty();
        assertThat(parse("--regions", "9").problems()).singleElement().asString()
                .isEqualTo("--regions 9 is outside [1, 8]");
        assertThat(parse("--buckets", "65").problems()).singleElement().asString()
                .isEqualTo("--buckets 65 is outside [0, 64] (0 = the platform's default)");
        assertThat(parse("--regions", "0", "--buckets", "-1").problems()).hasSize(2);
    }

    @Test
    void regionsAreNamedAfterTheHomeRegion_andSplitTheUnitsEvenly() {
        FlashSaleCommand c = parse("--regions", "3", "--region-name", "us", "--buckets", "4");
        assertThat(c.regionNames()).containsExactly("us", "us-2", "us-3");
        var req = c.createItem(new SaleDriver.Item("bench", "flash-1", 10_001));
        assertThat(req.getHomeRegion()).isEqualTo("us");
        assertThat(req.getBucketCount()).isEqualTo(4);
        assertThat(req.getRegionQuotasList()).extracting(q -> q.getRegion() + "=" + q.getQuantity())
                .containsExactly("us=3335", "us-2=3333", "us-3=3333");
        assertThat(parse().createItem(new SaleDriver.Item("bench", "flash-1", 7)).getRegionQuotasCount()).isZero();
        SaleDriver.Plan plan = new SaleDriver.Plan(java.util.List.of(new SaleDriver.Item("bench", "a", 1),
                new SaleDriver.Item("bench", "b", 1)), 10, 1, 0, false, c.regionNames(), "t");
        assertThat(java.util.stream.IntStream.range(0, 8).mapToObj(plan::regionOf).toList())
                .containsExactly("us", "us", "us-2", "us-2", "us-3", "us-3", "us", "us");
    }

    @Test
    void badOptionsExitTwoWithEveryProblemNamed() {
        StringWriter err = new StringWriter();
        CommandLine cl = FlashSaleLoad.commandLine();
        cl.setErr(new PrintWriter(err));
        int code = cl.execute("flash-sale", "--regions", "30", "--buckets", "200");
        assertThat(code).isEqualTo(ExitCodes.USAGE);
        assertThat(err.toString()).contains("error: --regions 30 is outside").contains("--buckets 200 is outside");
    }

    @Test
    void noCommandIsAUsageError() {
        CommandLine cl = FlashSaleLoad.commandLine();
        cl.setErr(new PrintWriter(new StringWriter()));
        assertThat(cl.execute()).isEqualTo(ExitCodes.USAGE);
    }

    @Test
    void boundsAreChecked() {
        List<String> p = parse("--units", "-1", "--buyers", "0", "--concurrency", "0", "--items", "10001",
                "--rate", "0", "--shards", "33", "--progress", "fancy").problems();
        assertThat(p).anyMatch(s -> s.startsWith("--units -1"))
                .anyMatch(s -> s.startsWith("--buyers 0"))
                .anyMatch(s -> s.startsWith("--concurrency 0"))
                .anyMatch(s -> s.startsWith("--items 10001"))
                .anyMatch(s -> s.startsWith("--rate 0"))
                .anyMatch(s -> s.startsWith("--shards 33"))
                .anyMatch(s -> s.startsWith("--progress 'fancy'"));
        assertThat(parse("--units", "3000000000", "--items", "2").problems())
                .singleElement().asString().contains("per item");
        assertThat(parse("--units", "2000000000", "--items", "2").problems()).isEmpty();
    }

    @Test
    void targetOptionsGoTogether() {
        assertThat(parse("--target", "10.0.0.1:7400", "--token", "t0k", "--zookeeper", "zk:2181").problems()).isEmpty();
        assertThat(parse("--target", "router").problems()).singleElement().asString().startsWith("--target 'router'");
        assertThat(parse("--target", "router:0").problems()).hasSize(1);
        assertThat(parse("--target", "r:7400", "--shards", "4").problems()).singleElement().asString()
                .startsWith("--shards");
        assertThat(parse("--target", "r:7400", "--jdbc-url", "jdbc:postgresql://h/db").problems()).hasSize(1);
        assertThat(parse("--token", "x").problems()).singleElement().asString().startsWith("--token needs --target");
        assertThat(parse("--zookeeper", "zk:2181").problems()).singleElement().asString()
                .startsWith("--zookeeper needs --target");
        assertThat(parse("--target", "r:7400", "--namespace", "/x").problems()).singleElement().asString()
                .contains("needs --zookeeper");
    }

    @Test
    void aWarmUpTwinIsTheFirstCandidateThatLandsWithTheSaleItem_elseThePlainId() {
        assertThat(FlashSaleCommand.twinId("warmup-a", id -> true)).isEqualTo("warmup-a");
        assertThat(FlashSaleCommand.twinId("warmup-a", id -> id.endsWith("-7") || id.endsWith("-9")))
                .isEqualTo("warmup-a-7");
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        assertThat(FlashSaleCommand.twinId("warmup-a", id -> tries.incrementAndGet() < 0)).isEqualTo("warmup-a");
        assertThat(tries.get()).isEqualTo(FlashSaleCommand.TWIN_TRIES_MAX);
        List<SaleDriver.Item> plain = parse().twins(List.of(new SaleDriver.Item("bench", "flash-x-1", 5)), "warmup-",
                List.of(new SaleDriver.Item("bench", "flash-y-1", 9)), null);
        assertThat(plain).containsExactly(new SaleDriver.Item("bench", "warmup-flash-x-1", 5));
    }

    @Test
    void warmup() {
        assertThat(parse().warmup).isZero();
        assertThat(parse("--warmup", "5000").problems()).isEmpty();
        assertThat(parse("--warmup", "-1").problems()).singleElement().asString().startsWith("--warmup -1");
    }

    @Test
    void warmupSoldOutNeedsAWarmupAndIsBounded() {
        assertThat(parse().warmupSoldOut).isZero();
        assertThat(parse("--warmup", "10000", "--warmup-sold-out", "100000").problems()).isEmpty();
        assertThat(parse("--warmup-sold-out", "100000").problems()).singleElement().asString()
                .isEqualTo("--warmup-sold-out needs --warmup (it asks for the warm-up items once they are sold out)");
        assertThat(parse("--warmup", "10", "--warmup-sold-out", "-1").problems()).singleElement().asString()
                .isEqualTo("--warmup-sold-out -1 is outside [0, 10000000]");
        assertThat(parse("--warmup", "10", "--warmup-sold-out", "10000001").problems()).singleElement().asString()
                .isEqualTo("--warmup-sold-out 10000001 is outside [0, 10000000]");
    }

    @Test
    void hostProbeIsOffByDefaultAndBounded() {
        assertThat(parse().hostProbe).isZero();
        assertThat(parse("--host-probe", "3").problems()).isEmpty();
        assertThat(parse("--host-probe", "-1").problems()).singleElement().asString()
                .isEqualTo("--host-probe -1 is outside [0, 60]");
        assertThat(parse("--host-probe", "61").problems()).singleElement().asString()
                .isEqualTo("--host-probe 61 is outside [0, 60]");
    }

    @Test
    void warmupSecondsNeedAnOpenLoopAndAreBounded() {
        assertThat(parse().warmupSeconds).isZero();
        assertThat(parse("--rate", "1000", "--warmup-seconds", "10").problems()).isEmpty();
        assertThat(parse("--warmup-seconds", "10").problems()).singleElement().asString()
                .isEqualTo("--warmup-seconds needs --rate (it warms up open loop at that rate)");
        assertThat(parse("--rate", "1000", "--warmup-seconds", "-1").problems()).singleElement().asString()
                .isEqualTo("--warmup-seconds -1 is outside [0, 600]");
        assertThat(parse("--rate", "1000", "--warmup-seconds", "601").problems()).singleElement().asString()
                .isEqualTo("--warmup-seconds 601 is outside [0, 600]");
    }

    @Test
    void jdbcUrlFormIsChecked() {
        assertThat(parse("--jdbc-url", "mysql://h/db").problems()).singleElement().asString().startsWith("--jdbc-url");
        assertThat(parse("--jdbc-url", "jdbc:postgresql://127.0.0.1:5432/postgres").problems()).isEmpty();
    }

    @Test
    void openLoopRate() {
        assertThat(parse("--rate", "2000").rate).isEqualTo(2000.0);
        assertThat(parse("--rate", "-5").problems()).hasSize(1);
    }

    @Test
    void unitsAreSplitEvenlyOverTheItems() {
        List<SaleDriver.Item> c = FlashSaleCommand.catalog("bench", 3, 10, "tag");
        assertThat(c).extracting(SaleDriver.Item::total).containsExactly(4L, 3L, 3L);
        assertThat(c).extracting(SaleDriver.Item::itemId).containsExactly("flash-tag-1", "flash-tag-2", "flash-tag-3");
        assertThat(FlashSaleCommand.catalog("bench", 2, 0, "t")).extracting(SaleDriver.Item::total)
                .containsExactly(0L, 0L);
    }

    @Test
    void hostPort() {
        assertThat(FlashSaleCommand.isHostPort("127.0.0.1:7400")).isTrue();
        assertThat(FlashSaleCommand.isHostPort("router.svc:443")).isTrue();
        assertThat(FlashSaleCommand.isHostPort(":7400")).isFalse();
        assertThat(FlashSaleCommand.isHostPort("h:")).isFalse();
        assertThat(FlashSaleCommand.isHostPort("h:70000")).isFalse();
        assertThat(FlashSaleCommand.isHostPort("h:x")).isFalse();
    }
}
