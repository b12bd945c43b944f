package io.lastunit.router.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Maps bearer tokens to what their holders may do. Configuration never holds a token, only
 * its SHA-256 digest (hex), so a leaked config file grants nothing. Immutable, thread-safe.
 *
 * <p>A grant is written {@code <sha256-hex>:<name>:<tenant>[,<tenant>...][:admin]}; the tenant
 * {@code *} means every tenant. {@code admin} allows CreateItem and Restock.
 */
public final class Authenticator {

    /** Who is calling: a name for logs, the tenants they may use, and whether they are an admin. */
    public record Principal(String name, Set<String> tenants, boolean admin) {
        public boolean mayUse(String tenant) {
            return tenants.contains("*") || tenants.contains(tenant);
        }
    }

    private final Map<String, Principal> byDigest;

    private Authenticator(Map<String, Principal> byDigest) {
        this.byDigest = Map.copyOf(byDigest);
    }

    /** Parses grants; a malformed grant fails start-up with its position named. */
    public static Authenticator fromGrants(List<String> grants) {
        Map<String, Principal> map = new HashMap<>();
        for (int i = 0; i < grants.size(); i++) {
            String g = grants.get(i).trim();
            String[] parts = g.split(":", -1);
            if (parts.length < 3 || parts.length > 4 || !parts[0].matches("[0-9a-fA-F]{64}") || parts[1].isBlank()
                    || parts[2].isBlank() || (parts.length == 4 && !parts[3].equals("admin"))) {
                throw new IllegalArgumentException("token grant #" + i + " is not <sha256-hex>:<name>:<tenants>[:admin]");
            }
            Set<String> tenants = new java.util.LinkedHashSet<>();
            for (String t : parts[2].split(",", -1)) {
                if (t.isBlank() || !tenants.add(t.trim())) {
                    throw new IllegalArgumentException("token grant #" + i + " names an empty or repeated tenant");
                }
            }
            Principal p = new Principal(parts[1], Set.copyOf(tenants), parts.length == 4);
            if (map.put(parts[0].toLowerCase(java.util.Locale.ROOT), p) != null) {
                throw new IllegalArgumentException("token grant #" + i + " repeats a digest");
            }
        }
        return new Authenticator(map);
    }

    public Optional<Principal> authenticate(String token) {
        if (token == null || token.isEmpty()) {
            return Optional.empty();
        }
        return Optional.ofNullable(byDigest.get(sha256Hex(token)));
    }

    public static String sha256Hex(String token) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(d);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
