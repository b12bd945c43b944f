package io.lastunit.common.metrics;

import io.grpc.ClientInterceptor;
import io.grpc.ServerInterceptor;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingClientInterceptor;
import io.micrometer.core.instrument.binder.grpc.MetricCollectingServerInterceptor;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.DistributionStatisticConfig;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The one way a lastunit service makes its meter registry (docs/observability.md): Prometheus
 * naming (dots become underscores, base units, {@code _total} on counters), every meter of ours
 * under {@code lastunit.}, a {@code component} tag on everything (shard, router, balancer, admin;
 * not {@code service}, which Micrometer's gRPC meters use for the gRPC service's name), JVM, GC and process meters, and
 * fixed histogram buckets wherever an alert or the dashboard takes a quantile — no per-tenant or
 * per-item label anywhere, so the series count is bounded by the deployment's shape.
 *
 * <p>gRPC: {@link #grpcServerInterceptor} is Micrometer's own collecting interceptor; its meters
 * ({@code grpc.server.*}) are renamed {@code lastunit.grpc.server.*}; {@link #grpcClientInterceptor}'s
 * ({@code grpc.client.*}, with the called {@code target}) {@code lastunit.grpc.client.*}.
 */
public final class Metrics {
    /** Every meter of ours starts with this (Prometheus: {@code lastunit_}). */
    public static final String PREFIX = "lastunit.";

    /**
     * The latency buckets of every RPC and commit histogram, in seconds: fine where lastunit lives
     * (hundreds of microseconds to tens of milliseconds) and up to the deadlines callers use. The
     * SLO in the alert rules (100 ms at p99) is one of them, so its burn rate is exact.
     */
    public static final List<Duration> LATENCY_BUCKETS = List.of(
            Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2),
            Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofMillis(2_500), Duration.ofSeconds(5), Duration.ofSeconds(10));

    private Metrics() {
    }

    /**
     * A registry for {@code component} ({@code shard}, {@code router}, {@code balancer}, {@code admin})
     * with {@code tags} on every meter (for example {@code cell}, {@code shard}: values fixed for
     * the process's life).
     */
    public static PrometheusMeterRegistry newRegistry(String component, String... tags) {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        configure(registry, component, tags);
        return registry;
    }

    /** Applies the naming, tags, buckets and the JVM meters to {@code registry} (before any meter is made). */
    public static void configure(MeterRegistry registry, String component, String... tags) {
        if (tags.length % 2 != 0) {
            throw new IllegalArgumentException("tags come in name, value pairs: " + List.of(tags));
        }
        List<String> common = new ArrayList<>(List.of("component", component));
        common.addAll(List.of(tags));
        registry.config()
                .meterFilter(MeterFilter.commonTags(Tags.of(common.toArray(String[]::new))))
                .meterFilter(new MeterFilter() {
                    @Override
                    public Meter.Id map(Meter.Id id) {
                        return id.getName().startsWith("grpc.") ? id.withName(PREFIX + id.getName()) : id;
                    }
                })
                .meterFilter(new MeterFilter() {
                    @Override
                    public DistributionStatisticConfig configure(Meter.Id id, DistributionStatisticConfig config) {
                        if (id.getType() != Meter.Type.TIMER || !id.getName().startsWith(PREFIX)) {
                            return config;
                        }
                        return DistributionStatisticConfig.builder()
                                .serviceLevelObjectives(LATENCY_BUCKETS.stream().mapToDouble(Duration::toNanos).toArray())
                                .build().merge(config);
                    }
                });
        new JvmMemoryMetrics().bindTo(registry);
        new JvmGcMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ClassLoaderMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
    }

    /**
     * Micrometer's gRPC server interceptor on {@code registry}: per method, calls received,
     * responses sent, and the processing time by status code ({@code lastunit_grpc_server_*}).
     */
    public static ServerInterceptor grpcServerInterceptor(MeterRegistry registry) {
        return new MetricCollectingServerInterceptor(registry);
    }

    /**
     * Micrometer's gRPC client interceptor on {@code registry}, for one channel to another service
     * at {@code target} ({@code host:port}): per method, requests sent, responses received, and the
     * time of each call by status code ({@code lastunit_grpc_client_*}), with a {@code target} label
     * so that one shard's failures stand out. The label's values are the deployment's shard nodes
     * (and balancers): bounded by its shape, like the shard's own {@code shard} label. One
     * interceptor per channel: it keeps its meters per method.
     */
    public static ClientInterceptor grpcClientInterceptor(MeterRegistry registry, String target) {
        return new MetricCollectingClientInterceptor(registry, c -> c.tag("target", target),
                t -> t.tag("target", target), io.grpc.Status.Code.OK);
    }
}
