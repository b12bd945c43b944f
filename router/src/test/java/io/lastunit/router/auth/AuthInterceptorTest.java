package io.lastunit.router.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.google.rpc.ErrorInfo;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerInterceptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.lastunit.api.inventory.v1.GetStockRequest;
import io.lastunit.api.inventory.v1.GetStockResponse;
import io.lastunit.api.inventory.v1.InventoryServiceGrpc;
import io.lastunit.api.inventory.v1.Stock;
import io.lastunit.common.GrpcErrors;
import io.lastunit.common.Reason;
import io.lastunit.testkit.TestTimeouts;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** AuthInterceptor over grpc-java's in-process transport (no sockets). */
class AuthInterceptorTest {

    static final String ALICE_TOKEN = "alice-secret-token-1";
    static final String ADMIN_TOKEN = "admin-secret-token-2";
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

    /** A method of the open health service, served with a plain string marshaller. */
    static final MethodDescriptor<String, String> HEALTH_CHECK = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("grpc.health.v1.Health", "Check"))
            .setRequestMarshaller(new Utf8())
            .setResponseMarshaller(new Utf8())
            .build();

    /** The same method on a service whose name merely starts like health's: not open. */
    static final MethodDescriptor<String, String> NOT_HEALTH = HEALTH_CHECK.toBuilder()
            .setFullMethodName(MethodDescriptor.generateFullMethodName("grpc.health.v1.HealthX", "Check"))
            .build();

    static final class Utf8 implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new ByteArrayInputStream(value.getBytes(StandardCharsets.UTF_8));
        }

        @Override
        public String parse(InputStream stream) {
            try {
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    final AtomicInteger handled = new AtomicInteger();
    final AtomicReference<Authenticator.Principal> seen = new AtomicReference<>();
    final AtomicInteger healthHandled = new AtomicInteger();
    final AtomicInteger notHealthHandled = new AtomicInteger();

    /** Echoes the caller's principal: item_id = name, tenant_id = sorted tenants, total = admin ? 1 : 0. */
    final class EchoPrincipal extends InventoryServiceGrpc.InventoryServiceImplBase {
        @Override
        public void getStock(GetStockRequest request, StreamObserver<GetStockResponse> out) {
            handled.incrementAndGet();
            Authenticator.Principal p = AuthInterceptor.PRINCIPAL.get();
            seen.set(p);
            Stock.Builder s = Stock.newBuilder();
            if (p != null) {
                s.setItemId(p.name()).setTenantId(String.join(",", new TreeSet<>(p.tenants()))).setTotal(p.admin() ? 1 : 0);
            }
            out.onNext(GetStockResponse.newBuilder().setStock(s).build());
            out.onCompleted();
        }
    }

    Server server;
    ManagedChannel channel;

    @BeforeEach
    void start() throws IOException {
        Authenticator authenticator = Authenticator.fromGrants(List.of(
                Authenticator.sha256Hex(ALICE_TOKEN) + ":alice:shop-a,shop-b",
                Authenticator.sha256Hex(ADMIN_TOKEN) + ":ops:*:admin"));
        AuthInterceptor interceptor = new AuthInterceptor(authenticator);
        ServerServiceDefinition health = ServerServiceDefinition.builder("grpc.health.v1.Health")
                .addMethod(HEALTH_CHECK, ServerCalls.asyncUnaryCall((String req, StreamObserver<String> out) -> {
                    healthHandled.incrementAndGet();
                    Authenticator.Principal p = AuthInterceptor.PRINCIPAL.get();
                    out.onNext(req + "/" + (p == null ? "anonymous" : p.name()));
                    out.onCompleted();
                }))
                .build();
        ServerServiceDefinition notHealth = ServerServiceDefinition.builder("grpc.health.v1.HealthX")
                .addMethod(NOT_HEALTH, ServerCalls.asyncUnaryCall((String req, StreamObserver<String> out) -> {
                    notHealthHandled.incrementAndGet();
                    out.onNext(req);
                    out.onCompleted();
                }))
                .build();
        String name = InProcessServerBuilder.generateName();
        server = InProcessServerBuilder.forName(name)
                .directExecutor()
                .addService(ServerInterceptors.intercept(new EchoPrincipal(), interceptor))
                .addService(ServerInterceptors.intercept(health, interceptor))
                .addService(ServerInterceptors.intercept(notHealth, interceptor))
                .build()
                .start();
        channel = InProcessChannelBuilder.forName(name).directExecutor().build();
    }

    @AfterEach
    void stop() throws InterruptedException {
        channel.shutdownNow();
        server.shutdownNow();
        assertThat(channel.awaitTermination(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
        assertThat(server.awaitTermination(WAIT_MS, TimeUnit.MILLISECONDS)).isTrue();
    }

    /** How long a call may take, in process: 10 s, scaled for slow machines. */
    static final long WAIT_MS = TestTimeouts.scaled(Duration.ofSeconds(10)).toMillis();

    /** A call's deadline counted from when the call is made (a constant would count from class loading). */
    static CallOptions withDeadline() {
        return CallOptions.DEFAULT.withDeadlineAfter(WAIT_MS, TimeUnit.MILLISECONDS);
    }

    InventoryServiceGrpc.InventoryServiceBlockingStub stub(String authorization) {
        InventoryServiceGrpc.InventoryServiceBlockingStub s = InventoryServiceGrpc.newBlockingStub(channel)
                // a call the interceptor forgets to close fails, not hangs
                .withDeadlineAfter(WAIT_MS, TimeUnit.MILLISECONDS);
        if (authorization == null) {
            return s;
        }
        Metadata md = new Metadata();
        md.put(AUTHORIZATION, authorization);
        return s.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
    }

    static final GetStockRequest REQUEST = GetStockRequest.newBuilder().setTenantId("shop-a").setItemId("sku-1").build();

    StatusRuntimeException refused(String authorization) {
        return catchThrowableOfType(StatusRuntimeException.class, () -> stub(authorization).getStock(REQUEST));
    }

    void assertUnauthenticated(StatusRuntimeException e, String description) {
        assertThat(e).as("call must be refused").isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(e.getStatus().getDescription()).isEqualTo(description);
        ErrorInfo info = GrpcErrors.errorInfo(e).orElseThrow(() -> new AssertionError("no ErrorInfo in " + e));
        assertThat(info.getReason()).isEqualTo(Reason.UNAUTHENTICATED.name()).isEqualTo("UNAUTHENTICATED");
        assertThat(info.getDomain()).isEqualTo("lastunit.io");
        assertThat(handled).as("handler must not run for a refused call").hasValue(0);
        assertThat(seen).hasNullValue();
    }

    @Test
    void noAuthorizationMetadataIsUnauthenticated() {
        assertUnauthenticated(refused(null), "no bearer token in the authorization metadata");
    }

    @Test
    void unknownBearerTokenIsUnauthenticated() {
        assertUnauthenticated(refused("Bearer not-a-known-token"), "unknown bearer token");
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {
            "Basic xyz",
            "Basic " + ALICE_TOKEN,
            ALICE_TOKEN,
            "Bearer",
            "Bearer" + ALICE_TOKEN,
            "Token " + ALICE_TOKEN,
            " Bearer " + ALICE_TOKEN,
            ""})
    void nonBearerAuthorizationIsUnauthenticated(String authorization) {
        assertUnauthenticated(refused(authorization), "no bearer token in the authorization metadata");
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"Bearer ", "Bearer    ", "Bearer " + ALICE_TOKEN + "x", "Bearer abc"})
    void bearerWithEmptyOrWrongTokenIsUnauthenticated(String authorization) {
        assertUnauthenticated(refused(authorization), "unknown bearer token");
    }

    @Test
    void goodBearerTokenRunsTheHandlerWithThePrincipal() {
        GetStockResponse r = stub("Bearer " + ALICE_TOKEN).getStock(REQUEST);

        assertThat(handled).hasValue(1);
        assertThat(seen.get()).isEqualTo(new Authenticator.Principal("alice", Set.of("shop-a", "shop-b"), false));
        assertThat(r.getStock().getItemId()).isEqualTo("alice");
        assertThat(r.getStock().getTenantId()).isEqualTo("shop-a,shop-b");
        assertThat(r.getStock().getTotal()).isZero();
    }

    @Test
    void adminGrantIsSeenAsAdmin() {
        GetStockResponse r = stub("Bearer " + ADMIN_TOKEN).getStock(REQUEST);

        assertThat(handled).hasValue(1);
        assertThat(seen.get()).isEqualTo(new Authenticator.Principal("ops", Set.of("*"), true));
        assertThat(r.getStock().getItemId()).isEqualTo("ops");
        assertThat(r.getStock().getTenantId()).isEqualTo("*");
        assertThat(r.getStock().getTotal()).isEqualTo(1);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"bearer ", "BEARER ", "BeArEr "})
    void bearerSchemeIsCaseInsensitive(String scheme) {
        GetStockResponse r = stub(scheme + ALICE_TOKEN).getStock(REQUEST);

        assertThat(handled).hasValue(1);
        assertThat(r.getStock().getItemId()).isEqualTo("alice");
    }

    @Test
    void whitespaceAroundTheTokenIsIgnored() {
        GetStockResponse r = stub("Bearer   " + ALICE_TOKEN + "  ").getStock(REQUEST);

        assertThat(handled).hasValue(1);
        assertThat(r.getStock().getItemId()).isEqualTo("alice");
    }

    @Test
    void eachCallIsAuthenticatedOnItsOwn() {
        assertThat(stub("Bearer " + ALICE_TOKEN).getStock(REQUEST).getStock().getItemId()).isEqualTo("alice");
        assertThat(stub("Bearer " + ADMIN_TOKEN).getStock(REQUEST).getStock().getItemId()).isEqualTo("ops");
        StatusRuntimeException e = refused("Bearer nope");
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(stub("Bearer " + ALICE_TOKEN).getStock(REQUEST).getStock().getItemId()).isEqualTo("alice");

        assertThat(handled).as("three accepted calls, one refused").hasValue(3);
        assertThat(AuthInterceptor.PRINCIPAL.get()).as("no principal leaks into the test thread").isNull();
    }

    @Test
    void healthServiceIsOpenWithoutCredentials() {
        String reply = ClientCalls.blockingUnaryCall(channel, HEALTH_CHECK, withDeadline(), "ping");

        assertThat(reply).isEqualTo("ping/anonymous");
        assertThat(healthHandled).hasValue(1);
        assertThat(handled).hasValue(0);
    }

    /** A one-method service named {@code service}, served through the interceptor on its own server. */
    String callAnonymously(String service) throws IOException, InterruptedException {
        MethodDescriptor<String, String> method = HEALTH_CHECK.toBuilder()
                .setFullMethodName(MethodDescriptor.generateFullMethodName(service, "Call"))
                .build();
        ServerServiceDefinition definition = ServerServiceDefinition.builder(service)
                .addMethod(method, ServerCalls.asyncUnaryCall((String req, StreamObserver<String> out) -> {
                    out.onNext(req + "/" + (AuthInterceptor.PRINCIPAL.get() == null ? "anonymous" : "principal"));
                    out.onCompleted();
                }))
                .build();
        String name = InProcessServerBuilder.generateName();
        Server s = InProcessServerBuilder.forName(name).directExecutor()
                .addService(ServerInterceptors.intercept(definition, new AuthInterceptor(Authenticator.fromGrants(
                        List.of(Authenticator.sha256Hex(ALICE_TOKEN) + ":alice:shop-a")))))
                .build().start();
        ManagedChannel ch = InProcessChannelBuilder.forName(name).directExecutor().build();
        try {
            return ClientCalls.blockingUnaryCall(ch, method, withDeadline(), "ping");
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() + " " + GrpcErrors.errorInfo(e).map(ErrorInfo::getReason).orElse("");
        } finally {
            ch.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
            s.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"})
    void healthAndReflectionAreOpenWithoutCredentials(String service) throws Exception {
        assertThat(callAnonymously(service)).isEqualTo("ping/anonymous");
        assertThat(AuthInterceptor.OPEN_SERVICES).contains(service);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @ValueSource(strings = {"grpc.reflection.v1.ServerReflectionX", "grpc.reflection.v1beta.ServerReflection",
            "grpc.reflection.v1", "xgrpc.reflection.v1.ServerReflection", "lastunit.inventory.v1.InventoryService"})
    void servicesNamedLikeTheOpenOnesAreNotOpen(String service) throws Exception {
        assertThat(callAnonymously(service)).isEqualTo("UNAUTHENTICATED UNAUTHENTICATED");
    }

    @Test
    void aServiceNamedLikeHealthIsNotOpen() {
        StatusRuntimeException e = catchThrowableOfType(StatusRuntimeException.class,
                () -> ClientCalls.blockingUnaryCall(channel, NOT_HEALTH, withDeadline(), "ping"));

        assertThat(e).isNotNull();
        assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNAUTHENTICATED);
        assertThat(GrpcErrors.errorInfo(e).map(ErrorInfo::getReason)).contains("UNAUTHENTICATED");
        assertThat(notHealthHandled).hasValue(0);
    }
}
