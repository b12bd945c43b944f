package io.lastunit.common.tls;

import java.net.URI;
import java.net.URISyntaxException;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Who a certificate says a service is: the URI subject alternative name
 * {@code spiffe://lastunit/<role>/<name>}, e.g. {@code spiffe://lastunit/router/router-1}. The role
 * is what the allow-lists look at; the name is for logs and error messages. A certificate carries at
 * most one such URI. {@code role} may be a word no {@link Role} has (an identity still, and refused by
 * every allow-list). Immutable.
 */
public record ServiceIdentity(String role, String name) {
    /** The trust domain of every lastunit identity. */
    public static final String TRUST_DOMAIN = "lastunit";
    private static final String PREFIX = "spiffe://" + TRUST_DOMAIN + "/";
    /** Role and name: 1..64 letters, digits, '.', '_' or '-'. */
    private static final String PART = "[A-Za-z0-9._-]{1,64}";
    /** URI subject alternative names have this type (RFC 5280 GeneralName uniformResourceIdentifier). */
    private static final int SAN_URI = 6;

    public ServiceIdentity {
        if (role == null || !role.matches(PART) || name == null || !name.matches(PART)) {
            throw new IllegalArgumentException("a service identity is " + PREFIX + "<role>/<name>, each 1..64 of"
                    + " [A-Za-z0-9._-]; got role='" + role + "', name='" + name + "'");
        }
    }

    public static ServiceIdentity of(Role role, String name) {
        return new ServiceIdentity(role.id(), name);
    }

    /** The identity in {@code uri}, or empty when it is not {@code spiffe://lastunit/<role>/<name>}. */
    public static Optional<ServiceIdentity> parse(String uri) {
        if (uri == null || !uri.startsWith(PREFIX)) {
            return Optional.empty();
        }
        String[] parts = uri.substring(PREFIX.length()).split("/", -1);
        if (parts.length != 2 || !parts[0].matches(PART) || !parts[1].matches(PART)) {
            return Optional.empty();
        }
        return Optional.of(new ServiceIdentity(parts[0], parts[1]));
    }

    /**
     * The identity {@code certificate} names, or empty when it has no lastunit URI.
     *
     * @throws IllegalArgumentException when it names two (which one would count is not for us to guess)
     */
    public static Optional<ServiceIdentity> of(X509Certificate certificate) {
        Collection<List<?>> names;
        try {
            names = certificate.getSubjectAlternativeNames();
        } catch (CertificateParsingException e) {
            return Optional.empty();
        }
        if (names == null) {
            return Optional.empty();
        }
        ServiceIdentity found = null;
        for (List<?> n : names) {
            if (n.size() == 2 && Integer.valueOf(SAN_URI).equals(n.get(0))) {
                Optional<ServiceIdentity> id = parse(String.valueOf(n.get(1)));
                if (id.isPresent() && found != null) {
                    throw new IllegalArgumentException("certificate " + certificate.getSubjectX500Principal()
                            + " names two lastunit identities: " + found.uri() + " and " + id.get().uri());
                }
                found = id.orElse(found);
            }
        }
        return Optional.ofNullable(found);
    }

    /** The role, when it is one lastunit knows. */
    public Optional<Role> knownRole() {
        return Role.of(role);
    }

    public String uri() {
        return PREFIX + role + "/" + name;
    }

    /** The URI as a {@link URI} (for certificate builders). */
    public URI toUri() {
        try {
            return new URI(uri());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e); // the parts are checked in the constructor
        }
    }

    @Override
    public String toString() {
        return uri();
    }
}
