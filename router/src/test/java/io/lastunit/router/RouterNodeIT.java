package io.lastunit.router;

import static io.lastunit.testkit.TestTimeouts.scaled;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.protobuf.ByteString;
import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import com.google.protobuf.DescriptorProtos.MethodDescriptorProto;
import com.google.protobuf.DescriptorProtos.ServiceDescriptorProto;
import com.google.protobuf.InvalidProtocolBufferException;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.common.GrpcErrors;
import io.lastunit.router.auth.Authenticator;
import io.lastunit.router.wiring.RouterProperties;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real router ({@link RouterNode}, as {@code ./lastunit router} starts it) on a real socket on
 * 127.0.0.1, over a real ZooKeeper (curator-test {@link TestingServer}) holding an empty topology:
 * what a caller without a token can use there (health by service name, server reflection v1 and
 * v1alpha) and what it cannot (InventoryService). The reflection clients are grpc-java's own
 * generated stubs, speaking the protocol grpcurl speaks.
 */
class RouterNodeIT {
    private static final String TOKEN = "router-node-it-token";
    private static final String INVENTORY = "lastunit.inventory.v1.InventoryService";
    private static final AtomicInteger ROOTS = new AtomicInteger();

    private static TestingServer zookeeper;
    private RouterNode router;
    private ManagedChannel channel;

    @BeforeAll
    static void startZooKeeper() throws Exception {
        InstanceSpec spec = new InstanceSpec(null, -1, -1, -1, true, -1, 500, -1,
                Map.of("clientPortAddress", "127.0.0.1"), "127.0.0.1");
        zookeeper = new TestingServer(spec, true);
    }

    @AfterAll
    static void stopZooKeeper() throws Exception {
        zookeeper.close();
    }

    @BeforeEach
    void startRouter() throws Exception {
        RouterProperties p = new RouterProperties();
        p.setId("router-it");
        p.setHost("127.0.0.1");
        p.setPort(0);
        p.setZookeeper(zookeeper.getConnectString());
        p.setNamespace("/router-it" + ROOTS.incrementAndGet());
        p.setTokens(List.of(Authenticator.sha256Hex(TOKEN) + ":it:*"));
        router = new RouterNode(p.toConfig()).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", router.port()).usePlaintext().build();
    }

    @AfterEach
    void stopRouter() throws InterruptedException {
        channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        router.close();
    }

    // ---- reflection v1 ----------------------------------------------------------------------

    /** Sends one request on a new v1 reflection stream, without a token, and returns the one answer. */
    io.grpc.reflection.v1.ServerReflectionResponse askV1(io.grpc.reflection.v1.ServerReflectionRequest request)
            throws Exception {
        CompletableFuture<io.grpc.reflection.v1.ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1.ServerReflectionRequest> requests = io.grpc.reflection.v1
                .ServerReflectionGrpc.newStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .serverReflectionInfo(new FirstAnswer<>(answer));
        requests.onNext(request);
        requests.onCompleted();
        return answer.get(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void reflectionV1_listsTheServices_withoutAToken() throws Exception {
        var r = askV1(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build());

        assertThat(r.hasErrorResponse()).as("error: %s", r.getErrorResponse()).isFalse();
        assertThat(r.getListServicesResponse().getServiceList())
                .extracting(io.grpc.reflection.v1.ServiceResponse::getName)
                .containsExactlyInAnyOrder(INVENTORY, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                        "grpc.reflection.v1alpha.ServerReflection");
    }

    @Test
    void reflectionV1_servesTheFileDescriptorOfInventoryService_withoutAToken() throws Exception {
        var r = askV1(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder()
                .setFileContainingSymbol(INVENTORY).build());

        assertThat(r.hasErrorResponse()).as("error: %s", r.getErrorResponse()).isFalse();
        assertDescribesInventoryService(r.getFileDescriptorResponse().getFileDescriptorProtoList());
    }

    // ---- reflection v1alpha -----------------------------------------------------------------

    io.grpc.reflection.v1alpha.ServerReflectionResponse askV1Alpha(
            io.grpc.reflection.v1alpha.ServerReflectionRequest request) throws Exception {
        CompletableFuture<io.grpc.reflection.v1alpha.ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<io.grpc.reflection.v1alpha.ServerReflectionRequest> requests = io.grpc.reflection.v1alpha
                .ServerReflectionGrpc.newStub(channel).withDeadlineAfter(30, TimeUnit.SECONDS)
                .serverReflectionInfo(new FirstAnswer<>(answer));
        requests.onNext(request);
        requests.onCompleted();
        return answer.get(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void reflectionV1Alpha_listsTheServices_withoutAToken() throws Exception {
        var r = askV1Alpha(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder().setListServices("").build());

        assertThat(r.hasErrorResponse()).as("error: %s", r.getErrorResponse()).isFalse();
        assertThat(r.getListServicesResponse().getServiceList())
                .extracting(io.grpc.reflection.v1alpha.ServiceResponse::getName)
                .containsExactlyInAnyOrder(INVENTORY, "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                        "grpc.reflection.v1alpha.ServerReflection");
    }

    @Test
    void reflectionV1Alpha_servesTheFileDescriptorOfInventoryService_withoutAToken() throws Exception {
        var r = askV1Alpha(io.grpc.reflection.v1alpha.ServerReflectionRequest.newBuilder()
                .setFileContainingSymbol(INVENTORY).build());

        assertThat(r.hasErrorResponse()).as("error: %s", r.getErrorResponse()).isFalse();
        assertDescribesInventoryService(r.getFileDescriptorResponse().getFileDescriptorProtoList());
    }

    /** The file that defines InventoryService comes first; a client can build every request from it. */
    static void assertDescribesInventoryService(List<ByteString> files) throws InvalidProtocolBufferException {
        assertThat(files).isNotEmpty();
        FileDescriptorProto file = FileDescriptorProto.parseFrom(files.get(0));
        assertThat(file.getName()).isEqualTo("lastunit/inventory/v1/inventory.proto");
        assertThat(file.getPackage()).isEqualTo("lastunit.inventory.v1");
        ServiceDescriptorProto service = file.getServiceList().stream()
                .filter(s -> s.getName().equals("InventoryService")).findFirst().orElseThrow();
        assertThat(service.getMethodList()).extracting(MethodDescriptorProto::getName)
                .contains("Reserve", "Confirm", "Release", "Extend", "GetHold", "GetStock", "CreateItem", "Restock");
        MethodDescriptorProto reserve = service.getMethodList().stream()
                .filter(m -> m.getName().equals("Reserve")).findFirst().orElseThrow();
        assertThat(reserve.getInputType()).isEqualTo(".lastunit.inventory.v1.ReserveRequest");
        assertThat(file.getMessageTypeList()).extracting(m -> m.getName()).contains("ReserveRequest");
    }

    // ---- InventoryService still needs a token -------------------------------------------------

    @Test
    void inventoryService_withoutAToken_isUnauthenticated_whileReflectionIsOpen() throws Exception {
        GetStockRequest request = GetStockRequest.newBuilder().setTenantId("acme").setItemId("sku-1").build();
        var stub = InventoryServiceGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);

        StatusRuntimeException anonymous = catchThrowableOfType(StatusRuntimeException.class,
                () -> stub.getStock(request));
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + TOKEN);
        StatusRuntimeException authenticated = catchThrowableOfType(StatusRuntimeException.class,
                () -> stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md)).getStock(request));

        assertThat(anonymous).isNotNull();
        assertThat(anonymous.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(GrpcErrors.errorInfo(anonymous).orElseThrow().getReason()).isEqualTo("UNAUTHENTICATED");
        // With the token the call gets past authentication: the empty topology has no cell for it.
        assertThat(authenticated).isNotNull();
        assertThat(GrpcErrors.errorInfo(authenticated).orElseThrow().getReason()).isEqualTo("TOPOLOGY_UNAVAILABLE");
        assertThat(askV1(io.grpc.reflection.v1.ServerReflectionRequest.newBuilder().setListServices("").build())
                .hasListServicesResponse()).isTrue();
    }

    // ---- health by service name -----------------------------------------------------------

    ServingStatus check(String service) {
        return HealthGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void health_isServingForTheWholeRouterAndForInventoryService_byName() {
        assertThat(check("")).isEqualTo(ServingStatus.SERVING);
        assertThat(check(INVENTORY)).isEqualTo(ServingStatus.SERVING);
        StatusRuntimeException unknown = catchThrowableOfType(StatusRuntimeException.class,
                () -> check("lastunit.shard.v1.ShardService"));
        assertThat(unknown.getStatus().getCode()).as("a service the router does not serve").isEqualTo(Status.Code.NOT_FOUND);
    }

    @Test
    void health_ofInventoryService_turnsNotServing_whenTheRouterStops() throws Exception {
        BlockingQueue<ServingStatus> seen = new LinkedBlockingQueue<>();
        AtomicReference<ClientCallStreamObserver<HealthCheckRequest>> watch = new AtomicReference<>();
        HealthGrpc.newStub(channel).watch(HealthCheckRequest.newBuilder().setService(INVENTORY).build(),
                new ClientResponseObserver<HealthCheckRequest, HealthCheckResponse>() {
                    @Override
                    public void beforeStart(ClientCallStreamObserver<HealthCheckRequest> call) {
                        watch.set(call);
                    }

                    @Override
                    public void onNext(HealthCheckResponse r) {
                        seen.add(r.getStatus());
                        if (r.getStatus() == ServingStatus.NOT_SERVING) {
                            watch.get().cancel("seen NOT_SERVING", null); // lets the stopping server finish
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        // the cancel above, or the server going away
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
        long waitMs = scaled(Duration.ofSeconds(10)).toMillis();
        assertThat(seen.poll(waitMs, TimeUnit.MILLISECONDS)).isEqualTo(ServingStatus.SERVING);

        CompletableFuture<Void> stopped = CompletableFuture.runAsync(router::close);

        assertThat(seen.poll(waitMs, TimeUnit.MILLISECONDS)).isEqualTo(ServingStatus.NOT_SERVING);
        stopped.get(waitMs, TimeUnit.MILLISECONDS);
    }

    /** Completes {@code answer} with the first response of a stream, or with its error. */
    static final class FirstAnswer<T> implements StreamObserver<T> {
        private final CompletableFuture<T> answer;

        FirstAnswer(CompletableFuture<T> answer) {
            this.answer = answer;
        }

        @Override
        public void onNext(T value) {
            answer.complete(value);
        }

        @Override
        public void onError(Throwable t) {
            answer.completeExceptionally(t);
        }

        @Override
        public void onCompleted() {
            answer.completeExceptionally(new AssertionError("the stream ended without an answer"));
        }
    }
}
