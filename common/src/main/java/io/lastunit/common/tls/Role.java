package io.lastunit.common.tls;

import java.util.Locale;
import java.util.Optional;

/**
 * What a lastunit service is, as its certificate names it ({@link ServiceIdentity}): the allow-lists
 * of the internal services ({@link AllowList}) admit callers by role, never by name. Immutable.
 */
public enum Role {
    /** The public front door: calls the shard nodes' API and the balancer's Pull. */
    ROUTER,
    /** The bucket-balancer: moves stock between shards (the transfer steps), reads levels. */
    BALANCER,
    /** The operators' tools: the admin server and its movers, the {@code ./lastunit admin} commands. */
    ADMIN,
    /** A shard node: it serves, and calls no other service. */
    SHARD;

    /** The role as written in a certificate: lower case ({@code router}). */
    public String id() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The role written {@code id}, or empty for a word that names none (case matters: {@code router}). */
    public static Optional<Role> of(String id) {
        for (Role r : values()) {
            if (r.id().equals(id)) {
                return Optional.of(r);
            }
        }
        return Optional.empty();
    }
}
