package io.lastunit.common.tls;

import java.util.Arrays;
import java.util.Collections;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which client roles may call which gRPC method of one service process, for {@link PeerAuthInterceptor}.
 * A method is open (any caller, with or without a certificate: health, reflection), allowed to the
 * roles named for it or for its whole service, or, when named nowhere, closed to everyone: a method
 * added later is refused until it is listed. Pure: no I/O; immutable once built, thread-safe.
 */
public final class AllowList {
    /** Health and reflection: probes and tools need no certificate, and they read or change no stock. */
    public static final Set<String> OPEN_SERVICES = Set.of(
            "grpc.health.v1.Health",
            "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection");

    private final String server;
    private final Map<String, Set<Role>> byMethod;
    private final Map<String, Set<Role>> byService;

    private AllowList(Builder b) {
        this.server = b.server;
        this.byMethod = copy(b.byMethod);
        this.byService = copy(b.byService);
    }

    private static Map<String, Set<Role>> copy(Map<String, EnumSet<Role>> m) {
        Map<String, Set<Role>> c = new HashMap<>();
        m.forEach((k, v) -> c.put(k, Collections.unmodifiableSet(EnumSet.copyOf(v))));
        return Map.copyOf(c);
    }

    /** @param server the process the list guards, for error messages ("shard node shared-local-1") */
    public static Builder builder(String server) {
        return new Builder(server);
    }

    /** Whether {@code fullMethod} ({@code package.Service/Method}) is open to every caller. */
    public boolean isOpen(String fullMethod) {
        return OPEN_SERVICES.contains(serviceOf(fullMethod));
    }

    /** The roles that may call {@code fullMethod}; empty: nobody (or it is open: {@link #isOpen}). */
    public Set<Role> rolesFor(String fullMethod) {
        Set<Role> roles = byMethod.get(fullMethod);
        if (roles == null) {
            roles = byService.get(serviceOf(fullMethod));
        }
        return roles == null ? Set.of() : roles;
    }

    /** Why {@code caller} may not call {@code fullMethod}, or empty when it may. */
    public Optional<String> refusal(String fullMethod, ServiceIdentity caller) {
        if (isOpen(fullMethod)) {
            return Optional.empty();
        }
        Set<Role> roles = rolesFor(fullMethod);
        Optional<Role> role = caller.knownRole();
        if (role.isPresent() && roles.contains(role.get())) {
            return Optional.empty();
        }
        Set<String> allowed = new TreeSet<>();
        roles.forEach(r -> allowed.add(r.id()));
        return Optional.of(server + " refuses " + fullMethod + " from " + caller.uri() + " (role '" + caller.role()
                + "'" + (role.isEmpty() ? ", which lastunit does not know" : "") + "): "
                + (allowed.isEmpty() ? "no role may call it" : "only " + String.join(", ", allowed) + " may"));
    }

    static String serviceOf(String fullMethod) {
        int slash = fullMethod == null ? -1 : fullMethod.lastIndexOf('/');
        return slash < 0 ? String.valueOf(fullMethod) : fullMethod.substring(0, slash);
    }

    /** Every method and service named, with its roles, for tests and docs. */
    public Map<String, Set<Role>> entries() {
        Map<String, Set<Role>> all = new HashMap<>(byService);
        all.putAll(byMethod);
        return Map.copyOf(all);
    }

    /** Builds an {@link AllowList}. Not thread-safe. */
    public static final class Builder {
        private final String server;
        private final Map<String, EnumSet<Role>> byMethod = new HashMap<>();
        private final Map<String, EnumSet<Role>> byService = new HashMap<>();
        private final Set<String> named = new HashSet<>();

        private Builder(String server) {
            this.server = server;
        }

        /** {@code roles} may call every method of {@code service} not named by {@link #method}. */
        public Builder service(String service, Role... roles) {
            put(byService, service, roles);
            return this;
        }

        /** {@code roles} (and only they) may call {@code fullMethod}. */
        public Builder method(String fullMethod, Role... roles) {
            if (fullMethod.indexOf('/') < 0) {
                throw new IllegalArgumentException("'" + fullMethod + "' is not package.Service/Method");
            }
            put(byMethod, fullMethod, roles);
            return this;
        }

        private void put(Map<String, EnumSet<Role>> into, String key, Role... roles) {
            if (roles.length == 0) {
                throw new IllegalArgumentException(key + ": name at least one role (a method named nowhere is closed)");
            }
            if (!named.add(key)) {
                throw new IllegalArgumentException(key + " is named twice");
            }
            into.put(key, EnumSet.copyOf(Arrays.asList(roles)));
        }

        public AllowList build() {
            return new AllowList(this);
        }
    }
}
