package io.lastunit.shard;

import static io.lastunit.testkit.TestTimeouts.scaled;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.DescriptorProtos.FileDescriptorProto;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.lastunit.testkit.PostgresFixture;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The services a real shard node serves beside its API, over a real socket: health by service
 * name, and server reflection (what grpcurl uses to list and describe them).
 */
class ShardNodeServicesIT {
    @RegisterExtension
    static final PostgresFixture PG = new PostgresFixture();

    private ShardNodeHarness shard;

    @BeforeEach
    void start() throws Exception {
        shard = new ShardNodeHarness(PG, Map.of()).start();
    }

    @AfterEach
    void stop() {
        shard.close();
    }

    /** One request on a new v1 reflection stream, and its one answer. */
    ServerReflectionResponse reflect(ServerReflectionRequest request) throws Exception {
        CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
        StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(shard.channel())
                .withDeadlineAfter(30, TimeUnit.SECONDS)
                .serverReflectionInfo(new StreamObserver<>() {
                    @Override
                    public void onNext(ServerReflectionResponse r) {
                        answer.complete(r);
                    }

                    @Override
                    public void onError(Throwable t) {
                        answer.completeExceptionally(t);
                    }

                    @Override
                    public void onCompleted() {
                        answer.completeExceptionally(new AssertionError("the stream ended without an answer"));
                    }
                });
        requests.onNext(request);
        requests.onCompleted();
        return answer.get(scaled(Duration.ofSeconds(10)).toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void reflection_listsTheNodesServices() throws Exception {
        ServerReflectionResponse r = reflect(ServerReflectionRequest.newBuilder().setListServices("").build());

        assertThat(r.getListServicesResponse().getServiceList()).extracting(ServiceResponse::getName)
                .containsExactlyInAnyOrder("lastunit.inventory.v1.InventoryService", "lastunit.shard.v1.ShardService",
                        "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
                        "grpc.reflection.v1alpha.ServerReflection");
    }

    @Test
    void reflection_servesTheFileDescriptorOfShardService() throws Exception {
        ServerReflectionResponse r = reflect(ServerReflectionRequest.newBuilder()
                .setFileContainingSymbol("lastunit.shard.v1.ShardService").build());

        List<com.google.protobuf.ByteString> files = r.getFileDescriptorResponse().getFileDescriptorProtoList();
        assertThat(files).isNotEmpty();
        FileDescriptorProto file = FileDescriptorProto.parseFrom(files.get(0));
        assertThat(file.getName()).isEqualTo("lastunit/shard/v1/shard.proto");
        assertThat(file.getServiceList()).extracting(s -> s.getName()).contains("ShardService");
    }

    ServingStatus check(String service) {
        return HealthGrpc.newBlockingStub(shard.channel()).withDeadlineAfter(10, TimeUnit.SECONDS)
                .check(HealthCheckRequest.newBuilder().setService(service).build()).getStatus();
    }

    @Test
    void health_isServingForTheNodeAndForEachOfItsServices_byName() {
        assertThat(check("")).isEqualTo(ServingStatus.SERVING);
        assertThat(check("lastunit.inventory.v1.InventoryService")).isEqualTo(ServingStatus.SERVING);
        assertThat(check("lastunit.shard.v1.ShardService")).isEqualTo(ServingStatus.SERVING);
    }

    @Test
    void health_ofShardService_turnsNotServing_whenTheNodeStops() throws Exception {
        BlockingQueue<ServingStatus> seen = new LinkedBlockingQueue<>();
        AtomicReference<ClientCallStreamObserver<HealthCheckRequest>> watch = new AtomicReference<>();
        HealthGrpc.newStub(shard.channel()).watch(
                HealthCheckRequest.newBuilder().setService("lastunit.shard.v1.ShardService").build(),
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

        CompletableFuture<Void> stopped = CompletableFuture.runAsync(shard.node()::close);

        assertThat(seen.poll(waitMs, TimeUnit.MILLISECONDS)).isEqualTo(ServingStatus.NOT_SERVING);
        stopped.get(waitMs, TimeUnit.MILLISECONDS);
    }
}
