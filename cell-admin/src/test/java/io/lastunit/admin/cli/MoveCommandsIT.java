package io.lastunit.admin.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.lastunit.admin.platform.LocalPlatform;
import io.lastunit.api.inventory.v1.CreateItemRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.shard.ShardConfig;
import io.lastunit.testkit.PostgresFixture;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The move commands against a running platform (cells shared and big, no mover resuming moves):
 * each refusal prints its reason and exits 2 with nothing recorded; a move planned without
 * {@code --wait} is listed and shown, and a second one of the tenant is refused as running.
 */
class MoveCommandsIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private static LocalPlatform platform;
    private static ManagedChannel router;

    @BeforeAll
    static void start() throws Exception {
        platform = LocalPlatform.builder(id -> new ShardConfig.Jdbc(PG.newDatabase(id), PG.user(), PG.password(), 0))
                .cell("shared", List.of("local"), 1).cell("big", List.of("local"), 1).balancers(0)
                .adminResumeInterval(Duration.ZERO).start();
        router = NettyChannelBuilder.forAddress("127.0.0.1", platform.routerPort()).usePlaintext().build();
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + LocalPlatform.DEV_TOKEN);
        InventoryServiceGrpc.newBlockingStub(router).withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md))
                .withDeadlineAfter(30, TimeUnit.SECONDS).createItem(CreateItemRequest.newBuilder()
                        .setTenantId("acme").setItemId("shoe").setTotal(5).setHomeRegion("local").build());
    }

    @AfterAll
    static void stop() throws Exception {
        if (router != null) {
            router.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
        if (platform != null) {
            platform.close();
        }
    }

    private static CliRun admin(String... args) {
        String[] all = new String[args.length + 3];
        all[0] = "admin";
        all[1] = "--zookeeper";
        all[2] = platform.zookeeper();
        System.arraycopy(args, 0, all, 3, args.length);
        return CliRun.of(all);
    }

    private static void assertRefused(CliRun r, String reason) {
        assertThat(r.exitCode()).as(r.err()).isEqualTo(ExitCodes.USAGE);
        assertThat(r.err()).startsWith("error: " + reason + ": ").doesNotContain("Exception");
    }

    @Test
    void refusals_nameTheirReason_andRecordNothing_thenAPlannedMoveIsListedShownAndRunning() {
        assertRefused(admin("tenants", "move", "--tenant", "acme", "--to-cell", "nowhere"), "UNKNOWN_CELL");
        assertRefused(admin("tenants", "move", "--tenant", "acme", "--to-cell", "shared"), "TENANT_ALREADY_IN_CELL");
        assertRefused(admin("tenants", "move", "--tenant", "nobody", "--to-cell", "big"), "UNKNOWN_TENANT");
        assertRefused(admin("moves", "show", "no-such-move"), "UNKNOWN_MOVE");
        CliRun none = admin("moves", "list");
        assertThat(none.exitCode()).as(none.err()).isZero();
        assertThat(none.out()).contains("no moves");

        CliRun planned = admin("tenants", "move", "--tenant", "acme", "--to-cell", "big", "--max-pause", "1.5s");
        assertThat(planned.exitCode()).as(planned.err()).isZero();
        Matcher m = Pattern.compile("move (\\S+): tenant acme from shared to big, pause budget 1500 ms \\(PLANNED\\)")
                .matcher(planned.out());
        assertThat(m.find()).as(planned.out()).isTrue();
        String id = m.group(1);

        CliRun list = admin("moves", "list", "--tenant", "acme");
        assertThat(list.out()).contains(id, "PLANNED", "shared", "big");
        CliRun show = admin("moves", "show", id);
        assertThat(show.exitCode()).as(show.err()).isZero();
        assertThat(show.out()).contains("tenant      acme   shared -> big", "max pause   1500 ms",
                "run by      nobody now", "epochs      planned 0");
        assertRefused(admin("tenants", "move", "--tenant", "acme", "--to-cell", "big"), "MOVE_RUNNING");
        CliRun assign = admin("tenants", "assign", "acme", "big");
        assertThat(assign.exitCode()).isEqualTo(ExitCodes.USAGE);
        assertThat(assign.err()).contains("tenant acme is being moved (move " + id);
    }
}
