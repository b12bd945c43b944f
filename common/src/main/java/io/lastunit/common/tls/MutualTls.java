package io.lastunit.common.tls;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A service's files for mutual TLS: its own certificate chain (PEM, leaf first, naming its
 * {@link ServiceIdentity}) and PKCS#8 PEM key, and the CA certificates (PEM) its peers' certificates
 * chain to — the servers it dials and the clients it admits. {@link TlsCredentials} reads them, and
 * reads them again every {@code reloadInterval}. Immutable.
 */
public record MutualTls(File certificate, File key, File ca, Duration reloadInterval) {
    public static final Duration RELOAD_INTERVAL_DEFAULT = Duration.ofSeconds(10);
    public static final Duration RELOAD_INTERVAL_MIN = Duration.ofMillis(100);
    public static final Duration RELOAD_INTERVAL_MAX = Duration.ofHours(1);

    public MutualTls {
        List<String> problems = new ArrayList<>();
        for (File f : new File[] {certificate, key, ca}) {
            if (f != null && !f.canRead()) {
                problems.add("cannot read " + f);
            }
        }
        if (certificate == null || key == null || ca == null) {
            problems.add("certificate, key and ca go together");
        }
        if (reloadInterval == null || reloadInterval.compareTo(RELOAD_INTERVAL_MIN) < 0
                || reloadInterval.compareTo(RELOAD_INTERVAL_MAX) > 0) {
            problems.add("reload interval " + reloadInterval + " is outside [" + RELOAD_INTERVAL_MIN.toMillis() + " ms, "
                    + RELOAD_INTERVAL_MAX.toMinutes() + " min]");
        }
        if (!problems.isEmpty()) {
            throw new IllegalArgumentException("mutual TLS: " + String.join("; ", problems));
        }
    }

    /**
     * From a service's settings: null (mutual TLS off) when all three paths are blank; otherwise all
     * three are required.
     *
     * @param prefix the settings' prefix for messages, e.g. {@code lastunit.shard.mtls-}
     * @throws IllegalArgumentException naming the settings that are missing or unreadable
     */
    public static MutualTls fromSettings(String prefix, String certificate, String key, String ca, long reloadIntervalMs) {
        if (!allOrNone(prefix, certificate, key, ca)) {
            return null;
        }
        try {
            return new MutualTls(new File(certificate), new File(key), new File(ca), Duration.ofMillis(reloadIntervalMs));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(prefix + "*: " + e.getMessage(), e);
        }
    }

    /**
     * Whether the three settings {@code <prefix>certificate}, {@code key} and {@code ca} are given:
     * false when all are blank, true when none is.
     *
     * @throws IllegalArgumentException naming the missing ones when some are given and some not
     */
    static boolean allOrNone(String prefix, String certificate, String key, String ca) {
        boolean c = !blank(certificate);
        boolean k = !blank(key);
        boolean a = !blank(ca);
        if (!c && !k && !a) {
            return false;
        }
        if (!c || !k || !a) {
            List<String> missing = new ArrayList<>();
            if (!c) {
                missing.add(prefix + "certificate");
            }
            if (!k) {
                missing.add(prefix + "key");
            }
            if (!a) {
                missing.add(prefix + "ca");
            }
            throw new IllegalArgumentException(prefix + "certificate, " + prefix + "key and " + prefix
                    + "ca go together; missing: " + String.join(", ", missing));
        }
        return true;
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
