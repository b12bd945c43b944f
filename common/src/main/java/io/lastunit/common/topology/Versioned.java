package io.lastunit.common.topology;

import java.util.Objects;

/**
 * A value read from a znode together with the znode's data version, read in one call so the
 * two always belong together. For {@code tenants/{tenant}} the version is the tenant's fencing
 * epoch: pass it back as the expected epoch of the next compare-and-set. Immutable.
 *
 * @param value   the decoded value
 * @param version the znode data version (0 after create, +1 per write)
 */
public record Versioned<T>(T value, int version) {
    public Versioned {
        Objects.requireNonNull(value, "value");
        if (version < 0) {
            throw new IllegalArgumentException("version=" + version + " is negative");
        }
    }
}
